// Implements the progress lines and the end-of-run summary.
#include "harness/orchestrator/summary.hpp"

#include "reports/results_table.hpp"

#include <fmt/core.h>
#include <iostream>
#include <map>

namespace kj::orchestrator {

void progress_view::begin(const kb::problem& problem, const adapters::candidate& candidate) {
  fmt::print(stderr, "[{:>3}/{}] L{} {:<40} {} sample {} ... ", m_done + 1, m_total, problem.level,
             fmt::format("{}_{}", problem.number, problem.name).substr(0, 40), candidate.producer,
             candidate.sample);
  std::fflush(stderr);
}

void progress_view::end(const db::evaluation_record& record) {
  ++m_done;
  m_busy_s += record.duration_s;
  const std::size_t evaluated = m_done - m_skipped;
  const double eta =
      evaluated ? m_busy_s / static_cast<double>(evaluated) * static_cast<double>(m_total - m_done) : 0;
  std::string strict = record.strict_verdict.empty() ? "" : ", strict " + record.strict_verdict;
  if (!record.strict_failed.empty()) strict += " [" + record.strict_failed + "]";
  if (!record.degenerate.empty()) strict += ", degenerate problem";
  fmt::print(stderr, "{}{} ({:.1f} s, ETA {}:{:02})\n", record.verdict, strict, record.duration_s,
             static_cast<int>(eta) / 60, static_cast<int>(eta) % 60);
}

void print_run_summary(const db::store& store, const std::string& run_uid,
                       const std::filesystem::path& db_path) {
  const auto rows = reports::results(store, run_uid);
  reports::write_results(rows, reports::results_format::table, std::cout);
  std::map<std::string, int> counts;
  for (const auto& row : rows)
    ++counts[row.verdict];
  std::string line;
  for (const auto& [verdict, n] : counts)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", n, verdict);
  fmt::print("\nrun {}: {} evaluations: {}\nresults are in {} (kj results --db {} --run {})\n", run_uid,
             rows.size(), line, db_path.string(), db_path.string(), run_uid);
}

} // namespace kj::orchestrator
