// Implements the end-of-run summary.
#include "planning/orchestrator/summary.hpp"

#include "reports/results_table.hpp"
#include "reports/time_split.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <iostream>
#include <map>

namespace kj::orchestrator {

void print_run_summary(const db::store& store, const std::string& run_uid,
                       const std::filesystem::path& db_path, const device_use& use) {
  const auto rows = reports::results(store, run_uid);
  reports::write_results(rows, "table", std::cout);
  std::map<std::string, int> counts;
  for (const auto& row : rows)
    ++counts[name_of(row.verdict)];
  std::string line;
  for (const auto& [verdict, n] : counts)
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", n, verdict);
  fmt::print("\nrun {}: {} evaluations: {}\n", run_uid, rows.size(), line);
  std::string time = reports::time_split_line(reports::split_time(rows));
  if (use.wall_s > 0 && use.busy_s > 0)
    time += fmt::format("{}device slots idle {:.0f}% of this invocation's {:.0f} s", time.empty() ? "" : "; ",
                        100 * std::max(0.0, 1 - use.busy_s / (use.wall_s * static_cast<double>(use.slots))),
                        use.wall_s);
  if (!time.empty()) fmt::print("{}\n", time);
  fmt::print("results are in {} (kj results --db {} --run {})\n", db_path.string(), db_path.string(),
             run_uid);
}

} // namespace kj::orchestrator
