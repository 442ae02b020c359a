// Implements the fan-out, the DB writer and the console progress view.
#include "harness/scheduler/sinks.hpp"

#include <fmt/core.h>
#include <unistd.h>

namespace kj::scheduler {

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
                          result.build->status, result.build->seconds, result.build->log,
                          result.build->created_at});
  result.evaluation_id = m_store.insert_evaluation(result.record);
  batch.commit();
}

void db_sink::baseline(baseline_result& result) {
  if (!result.cached) result.record.id = m_store.insert_baseline(result.record);
}

progress_sink::progress_sink(bool quiet) : m_quiet(quiet), m_start(std::chrono::steady_clock::now()) {}

bool progress_sink::quiet_for(const std::string& mode) {
  if (mode == "always") return false;
  if (mode == "never") return true;
  return ::isatty(STDERR_FILENO) == 0;
}

void progress_sink::begin(std::size_t planned, std::size_t skipped) {
  m_planned = planned;
  m_start = std::chrono::steady_clock::now();
  if (skipped) fmt::print(stderr, "kj: {} evaluations already in this run are kept\n", skipped);
}

void progress_sink::evaluation(evaluation_result& r) {
  ++m_done;
  ++m_tally[r.record.verdict];
  if (m_quiet) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  const double per_job = elapsed / static_cast<double>(m_done);
  const double eta = per_job * static_cast<double>(m_planned > m_done ? m_planned - m_done : 0);
  std::string strict = r.record.strict_verdict.empty() ? "" : ", strict " + r.record.strict_verdict;
  if (!r.record.strict_failed.empty()) strict += " [" + r.record.strict_failed + "]";
  if (!r.record.degenerate.empty()) strict += ", degenerate problem";
  fmt::print(stderr, "[{:>3}/{}] L{} {:<36} {} s{}: {}{} ({:.1f} s; {:.1f}/min, ETA {}:{:02})\n", m_done,
             m_planned, r.problem.level, fmt::format("{}_{}", r.problem.number, r.problem.name).substr(0, 36),
             r.candidate.producer, r.candidate.sample, r.record.verdict, strict, r.record.duration_s,
             per_job > 0 ? 60 / per_job : 0.0, static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
}

void progress_sink::end(bool interrupted) {
  std::string tally;
  for (const auto& [verdict, n] : m_tally)
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n, verdict);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
  fmt::print(stderr, "kj: {} {} of {} evaluations in {:.0f} s{}{}\n",
             interrupted ? "interrupted after" : "judged", m_done, m_planned, elapsed,
             tally.empty() ? "" : ": ", tally);
}

} // namespace kj::scheduler
