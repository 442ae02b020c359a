// Implements the judgement of an evaluation record: worker events and builds to verdicts, trials, timings,
// cases.
#include "planning/orchestrator/judgement.hpp"

#include "core/verdict.hpp"
#include "timing/statistics.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/core.h>

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

// A case keeps its index unless the evaluation already has one of that class and index (the DB keys cases
// on both): then it gets the next free index, so that no set of events can make the evaluation unwritable.
void add_case(db::evaluation_record& record, db::case_record c) {
  int next = 0;
  bool taken = false;
  for (const auto& other : record.cases)
    if (other.case_class == c.case_class) {
      taken = taken || other.index == c.index;
      next = std::max(next, other.index + 1);
    }
  if (taken) c.index = next;
  record.cases.push_back(std::move(c));
}

db::case_record to_case(const json& e) {
  db::case_record c;
  c.case_class = e.value("class", "");
  c.index = e.value("index", 0);
  c.seed = e.value("seed", std::uint64_t{0});
  c.status = kj::parse_case_status(e.value("status", "fail")).value_or(case_status::fail); // unknown: failed
  c.judged_against = e.value("judged_against", "");
  c.max_abs_err = e.value("max_abs_err", 0.0);
  c.max_rel_err = e.value("max_rel_err", 0.0);
  c.mismatches = e.value("mismatches", std::int64_t{0});
  c.nonfinite_mismatches = e.value("nonfinite_mismatches", std::int64_t{0});
  c.first_index = e.value("first_index", std::int64_t{-1});
  c.message = e.value("message", "");
  return c;
}

// The kernel trace of a subject is stored with that subject's timing row (params_json["trace"]); the
// candidate's also yields strict cases.
void attach_trace(db::evaluation_record& record, const json& e, const trace_policy& policy) {
  for (auto& t : record.timings) {
    if (t.subject != e.value("subject", "")) continue;
    json params = json::parse(t.params_json);
    params["trace"] = e.value("trace", json());
    if (t.subject == "candidate")
      for (auto& c : trace_cases(e.value("trace", json()), policy)) {
        if (c.case_class == "side_stream" && c.status == case_status::fail) {
          // The headline time missed work the trace saw: it says so, and no speedup is derived from it.
          params["trusted"] = false;
          params["untrusted_reason"] = c.message;
        }
        add_case(record, std::move(c));
      }
    t.params_json = params.dump();
  }
}

// A timed call whose outputs were wrong (strict class timed_outputs) times work other than the checked
// calls': its time is not the candidate's correct work, and no speedup is derived from it.
void distrust_wrong_timed_calls(db::evaluation_record& record) {
  const auto wrong = std::find_if(record.cases.begin(), record.cases.end(), [](const db::case_record& c) {
    return c.case_class == "timed_outputs" && c.status == case_status::fail;
  });
  if (wrong == record.cases.end()) return;
  for (auto& t : record.timings) {
    if (t.subject != "candidate") continue;
    json params = json::parse(t.params_json, nullptr, false);
    if (!params.is_object()) params = json::object();
    params["trusted"] = false;
    params["untrusted_reason"] =
        "the outputs of its timed calls were wrong (timed_outputs): " + wrong->message;
    t.params_json = params.dump();
  }
}

void record_phase(db::evaluation_record& record, const json& e) {
  const std::string phase = e.value("phase", "");
  const double seconds = e.value("seconds", 0.0);
  if (phase == "strict") record.strict_s = seconds;
  if (phase == "compatible") record.compatible_s = seconds;
  for (auto& p : record.phases)
    if (p.phase == phase) {
      p.seconds += seconds;
      return;
    }
  record.phases.push_back({phase, seconds});
}

// The worker reports the phases it ran; the orchestrator adds `start` (launch to the first report: the
// process, its Python and imports) and `exit` (the last report to the process's end: the runner stopped, the
// interpreter finalized), both measured on its own clock, so that the phases sum to the wall time.
void account_phases(db::evaluation_record& record, const exec::worker_outcome& outcome) {
  if (outcome.first_event_s <= 0) return;
  record.phases.insert(record.phases.begin(), {"start", outcome.first_event_s});
  record.phases.push_back({"exit", std::max(0.0, outcome.wall_s - outcome.last_event_s)});
}

db::memory_record memory_of(const json& e) {
  const auto bytes = [&](const char* key) -> std::optional<std::int64_t> {
    if (!e.contains(key) || !e[key].is_number_integer()) return std::nullopt;
    return e[key].get<std::int64_t>();
  };
  return {.device_peak_bytes = bytes("device_peak_bytes"),
          .judge_device_bytes = bytes("judge_device_bytes"),
          .runner_device_bytes = bytes("runner_device_bytes"),
          .judge_rss_bytes = bytes("judge_rss_bytes"),
          .runner_rss_bytes = bytes("runner_rss_bytes"),
          .budget_bytes = bytes("budget_bytes")};
}

bool forbidden(const std::string& library, const std::string& policy) {
  if (policy == "forbid-all") return true;
  return policy == "forbid-torch" && (library == "aten" || library == "inductor");
}

} // namespace

// The strict verdict stands on its own rule: it fails on a failing case class, and on a compatible verdict
// other than correct, except an incorrect one whose only fault is KernelBench's fixed tolerance (which the
// strict classes judge by a rule that scales with the computation). A case kj could not judge (harness_error)
// fails nothing: without a failure elsewhere, the strict verdict is harness_error. kj's own failure of the
// whole evaluation (harness_error), and the problem's (problem_error), give no strict verdict.
void judge_strict(db::evaluation_record& record) {
  // kj's own failure, or the problem's (its file raised): nothing to say of the candidate.
  if (record.verdict == verdict::harness_error || record.verdict == verdict::problem_error) return;
  std::vector<std::string> failed;
  const bool tolerance_only = record.verdict == verdict::incorrect && record.reason == "tolerance";
  if (record.verdict != verdict::correct && !tolerance_only) failed.push_back("compatible");
  bool random_informative = false, any_random = false, undecided = false;
  for (const auto& c : record.cases) {
    if (c.status == case_status::fail &&
        std::find(failed.begin(), failed.end(), c.case_class) == failed.end())
      failed.push_back(c.case_class);
    undecided = undecided || c.status == case_status::harness_error;
    if (c.case_class == "random")
      any_random = true, random_informative |= c.status != case_status::uninformative;
  }
  if (tolerance_only && !any_random && failed.empty())
    failed.push_back("compatible"); // nothing else judged it
  if (any_random && !random_informative)
    record.degenerate = "the reference output is constant or non-finite on every random input";
  record.strict_verdict = !failed.empty() ? strict_verdict::fail
                          : undecided     ? strict_verdict::harness_error
                                          : strict_verdict::pass;
  for (const auto& f : failed)
    record.strict_failed += (record.strict_failed.empty() ? "" : ",") + f;
}

std::vector<db::case_record> trace_cases(const json& trace, const trace_policy& policy) {
  std::vector<db::case_record> cases;
  if (!trace.is_object() || trace.contains("error") || !trace.contains("side_stream")) return cases;
  db::case_record side;
  side.case_class = "side_stream";
  // A forward is one stream's work (KernelBench's contract): kernels on another stream that the current one
  // does not wait for leave the output unfinished when forward returns, a race for whatever reads it next.
  // robust and cuda-agent still time every stream (a device-wide sync inside the window; summed kernel time),
  // so no time escapes them, but the output's readiness is a correctness matter whatever the timer: other
  // streams fail.
  const bool other_streams = trace.value("other_streams", trace.value("side_stream", false));
  const bool busy_exceeds = trace.value("busy_exceeds_events", trace.value("side_stream", false));
  side.status = busy_exceeds || other_streams ? case_status::fail : case_status::pass;
  side.message = trace.value("side_stream_reason", "");
  if (side.message.empty())
    side.message = fmt::format("{} stream(s), {:.4g} ms busy per call", trace.value("streams", 0),
                               trace.value("busy_ms_per_call", 0.0));
  cases.push_back(side);
  if (policy.library_policy == "report") return cases;
  const double total = trace.value("kernel_ms", 0.0);
  double share = 0;
  std::string which;
  for (const auto& l : trace.value("libraries", json::array())) {
    const std::string name = l.value("library", "");
    if (!forbidden(name, policy.library_policy) || total <= 0) continue;
    share += l.value("ms", 0.0) / total;
    which += fmt::format("{}{} {:.0f}%", which.empty() ? "" : ", ", name, 100 * l.value("ms", 0.0) / total);
  }
  db::case_record library;
  library.case_class = "library";
  library.status = share > policy.max_library_share ? case_status::fail : case_status::pass;
  library.max_rel_err = share;
  library.message =
      fmt::format("share of kernel time in kernels that {} covers: {:.0f}%{}{}{} (limit {:.0f}%)",
                  policy.library_policy, 100 * share, which.empty() ? "" : " (", which,
                  which.empty() ? "" : ")", 100 * policy.max_library_share);
  cases.push_back(library);
  return cases;
}

db::timing_record timing_from_event(const json& e) {
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

void fill_evaluation(const exec::worker_outcome& outcome, const std::string& log_tail,
                     db::evaluation_record& record, const trace_policy& policy) {
  std::string last_phase = "start";
  const json* reported = nullptr;
  for (const auto& e : outcome.events) {
    const std::string type = e.value("type", "");
    if (type == "trial") record.trials.push_back(to_trial(e));
    if (type == "timing") record.timings.push_back(timing_from_event(e));
    if (type == "phase") last_phase = e.value("phase", last_phase);
    if (type == "verdict") reported = &e;
    if (type == "case") add_case(record, to_case(e));
    if (type == "finding") // found while running (static ones are added by the orchestrator)
      record.findings.push_back({e.value("kind", ""), 0, e.value("excerpt", "")});
    if (type == "trace") attach_trace(record, e, policy);
    if (type == "phase_time") record_phase(record, e);
    if (type == "memory") record.memory = memory_of(e);
  }
  distrust_wrong_timed_calls(record);
  record.duration_s = outcome.wall_s;
  account_phases(record, outcome);
  if (reported && !outcome.timed_out) {
    const std::string name = reported->value("verdict", "crashed");
    record.error = reported->value("error", "");
    record.reason = reported->value("reason", "");
    record.verdict = kj::parse_verdict(name).value_or(verdict::crashed);
    if (!kj::parse_verdict(name)) // the report pipe is not trusted to name only known verdicts
      record.error = fmt::format("worker reported an unknown verdict '{}': {}", name, record.error);
    judge_strict(record);
    return;
  }
  record.verdict = outcome.timed_out ? verdict::timeout : verdict::crashed;
  record.error = fmt::format("worker {} during {} without reporting a verdict", exec::describe_exit(outcome),
                             last_phase);
  if (outcome.timed_out && outcome.clock.reported) {
    record.error += fmt::format(" (the candidate's process had used {:.1f} s, kj's own work {:.1f} s)",
                                outcome.clock.candidate_s, outcome.clock.own_s);
    if (outcome.own_overrun ||
        !outcome.clock.waiting) { // the judge was at its own work: never the candidate's
      record.verdict = verdict::harness_error;
      record.error =
          fmt::format("kj's own work (the judge, outside the candidate's process) {} during {}: "
                      "kj's failure, not the candidate's (the candidate's process had used {:.1f} s, "
                      "kj {:.1f} s)",
                      outcome.own_overrun ? "ran past its own time limit" : "stopped reporting", last_phase,
                      outcome.clock.candidate_s, outcome.clock.own_s);
    }
  }
  if (last_phase == "start") { // no candidate code had run: kj's own start did not fit (or kj failed)
    record.verdict = verdict::harness_error;
    record.error = fmt::format("kj's own worker {} while starting Python and torch, before the candidate's "
                               "code ran (a --timeout or --memory-limit too small for kj itself?)",
                               exec::describe_exit(outcome));
  }
  if (!log_tail.empty()) record.error += "\n--- end of worker output ---\n" + log_tail;
  judge_strict(record);
}

void fill_from_build(db::evaluation_record& record, const exec::build_record& build) {
  // a failed build's verdict (exec::build_record), else the build crashed
  record.verdict = build.end == exec::build_end::failed ? build.failure : verdict::crashed;
  record.error =
      fmt::format("the candidate's build ended {}{}:\n{}", exec::status_name(build),
                  build.cached ? " (cached: this source failed the same way before)" : "", build.log);
  record.duration_s = build.cached ? 0 : build.seconds;
  judge_strict(record);
}

void without_strict(db::evaluation_record& record) {
  record.strict_verdict = strict_verdict::none;
  record.strict_failed.clear();
}

} // namespace kj::orchestrator
