// Implements the end-of-run summary.
#include "harness/orchestrator/summary.hpp"

#include "reports/results_table.hpp"

#include <fmt/core.h>
#include <iostream>
#include <map>

namespace kj::orchestrator {

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
