// Implements the fan-out, the DB writer and the console progress view.
#include "planning/results/sinks.hpp"

#include <fmt/core.h>
#include <unistd.h>

namespace kj::results {

void sink_set::begin(std::size_t planned, std::size_t skipped) {
  for (auto* s : m_sinks)
    s->begin(planned, skipped);
}

void sink_set::evaluation(evaluation_result& result) {
  for (auto* s : m_sinks)
    s->evaluation(result);
}

void sink_set::baseline(baseline_result& result) {
  for (auto* s : m_sinks)
    s->baseline(result);
}

void sink_set::end(bool interrupted) {
  for (auto* s : m_sinks)
    s->end(interrupted);
}

void db_sink::evaluation(evaluation_result& result) {
  db::store::batch batch(m_store); // the build and the evaluation: both or neither, even under kill -9
  if (result.build && result.record.candidate_id != 0)
    m_store.upsert_build({result.record.candidate_id, result.build->key, result.record.device,
                          exec::status_name(*result.build), result.build->seconds, result.build->log,
                          result.build->created_at});
  result.evaluation_id = m_store.insert_evaluation(result.record);
  batch.commit();
}

void db_sink::baseline(baseline_result& result) {
  if (!result.cached) result.record.id = m_store.insert_baseline(result.record);
}

progress_sink::progress_sink(bool quiet) : m_quiet(quiet), m_start(std::chrono::steady_clock::now()) {}

progress_mode progress_mode_for(const std::string& option) {
  if (option == "always") return progress_mode::lines;
  if (option == "never") return progress_mode::none;
  if (option == "log") return progress_mode::log;
  return ::isatty(STDERR_FILENO) ? progress_mode::lines : progress_mode::log;
}

namespace {} // namespace

std::string tally_text(const std::map<std::string, std::size_t>& tally) {
  std::string text;
  for (const auto& [verdict, n] : tally)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", n, verdict);
  return text;
}

std::string clock_text(double seconds) {
  const long total = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  if (total >= 3600) return fmt::format("{}:{:02}:{:02}", total / 3600, total / 60 % 60, total % 60);
  return fmt::format("{}:{:02}", total / 60, total % 60);
}

std::string progress_line(const evaluation_result& r, const progress_counts& c) {
  std::string verdict = name_of(r.record.verdict);
  if (r.record.strict_verdict != strict_verdict::none)
    verdict += ", strict " + name_of(r.record.strict_verdict);
  if (!r.record.strict_failed.empty()) verdict += " [" + r.record.strict_failed + "]";
  if (!r.record.degenerate.empty()) verdict += ", degenerate problem";
  // Throughput over the whole run so far (all slots, builds included): what the ETA needs.
  const double per_job = c.done > 0 ? c.elapsed_s / static_cast<double>(c.done) : 0;
  const double eta = per_job * static_cast<double>(c.planned > c.done ? c.planned - c.done : 0);
  const std::string name = fmt::format("{}_{}", r.problem.number, r.problem.name).substr(0, 36);
  return fmt::format("[{:>3}/{}] L{} {:<36} {} s{}: {} ({:.1f} s{}) | {} | {:.1f}/min, ETA {}", c.done,
                     c.planned, r.problem.level, name, r.candidate.producer, r.candidate.sample, verdict,
                     r.record.duration_s, r.slot.starts_with("cuda") ? ", " + r.slot : "",
                     tally_text(c.tally), per_job > 0 ? 60 / per_job : 0.0, clock_text(eta));
}

void progress_sink::begin(std::size_t planned, std::size_t skipped) {
  m_counts.planned = planned;
  m_start = std::chrono::steady_clock::now();
  if (skipped) fmt::print(stderr, "kj: {} evaluations already in this run are kept\n", skipped);
}

void progress_sink::evaluation(evaluation_result& r) {
  ++m_counts.done;
  ++m_counts.tally[name_of(r.record.verdict)];
  if (m_quiet) return;
  m_counts.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  fmt::print(stderr, "{}\n", progress_line(r, m_counts));
}

void progress_sink::end(bool interrupted) {
  const std::string tally = tally_text(m_counts.tally);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  fmt::print(stderr, "kj: {} {} of {} evaluations in {:.0f} s{}{}\n",
             interrupted ? "interrupted after" : "judged", m_counts.done, m_counts.planned, elapsed,
             tally.empty() ? "" : ": ", tally);
}

} // namespace kj::results
