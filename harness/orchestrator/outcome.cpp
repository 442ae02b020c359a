// Implements the mapping from worker events to verdicts, trial rows and timing rows.
#include "harness/orchestrator/outcome.hpp"

#include "harness/timing/statistics.hpp"

#include <fmt/core.h>

#include <cstring>

using nlohmann::json;

namespace kj::orchestrator {
namespace {

db::trial_record to_trial(const json& e) {
  db::trial_record t;
  t.index = e.value("index", 0);
  t.seed = e.value("seed", std::uint64_t{0});
  t.passed = e.value("passed", false);
  t.max_abs_err = e.value("max_abs_err", 0.0);
  t.max_rel_err = e.value("max_rel_err", 0.0);
  t.mismatches = e.value("mismatches", std::int64_t{0});
  json detail = e;
  for (const char* key : {"type", "index", "seed", "passed", "max_abs_err", "max_rel_err", "mismatches"})
    detail.erase(key);
  t.detail_json = detail.dump();
  return t;
}

db::timing_record to_timing(const json& e) {
  db::timing_record t;
  t.subject = e.value("subject", "");
  t.method = e.value("method", "");
  t.clock = e.value("clock", "");
  json params = e.value("params", json::object());
  params["stop_reason"] = e.value("stop_reason", "");
  t.params_json = params.dump();
  t.samples_ms = e.value("samples_ms", std::vector<double>{});
  if (!t.samples_ms.empty()) {
    const timing::summary s = timing::summarize(t.samples_ms);
    t.median_ms = s.median;
    t.mean_ms = s.mean;
    t.min_ms = s.min;
    t.max_ms = s.max;
    t.stdev_ms = s.stdev;
  }
  return t;
}

} // namespace

std::string describe_exit(const worker_outcome& outcome) {
  if (outcome.timed_out) return fmt::format("killed after {:.0f} s (the job's time limit)", outcome.wall_s);
  if (outcome.interrupted) return "interrupted by the user";
  if (outcome.term_signal)
    return fmt::format("killed by signal {} ({})", outcome.term_signal, ::strsignal(outcome.term_signal));
  return fmt::format("exited with code {}", outcome.exit_code);
}

void fill_evaluation(const worker_outcome& outcome, const std::string& log_tail, db::evaluation_record& record) {
  std::string last_phase = "start";
  const json* verdict = nullptr;
  for (const auto& e : outcome.events) {
    const std::string type = e.value("type", "");
    if (type == "trial") record.trials.push_back(to_trial(e));
    if (type == "timing") record.timings.push_back(to_timing(e));
    if (type == "phase") last_phase = e.value("phase", last_phase);
    if (type == "verdict") verdict = &e;
  }
  record.duration_s = outcome.wall_s;
  if (verdict && !outcome.timed_out) {
    record.verdict = verdict->value("verdict", "crashed");
    record.error = verdict->value("error", "");
    return;
  }
  record.verdict = outcome.timed_out ? "timeout" : "crashed";
  record.error = fmt::format("worker {} during {} without reporting a verdict", describe_exit(outcome), last_phase);
  if (!log_tail.empty()) record.error += "\n--- end of worker output ---\n" + log_tail;
}

} // namespace kj::orchestrator
