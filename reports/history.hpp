// `kj history PROBLEM`: one problem's candidates across runs, stacks and dates, each timing with its interval
// and its change against the previous measurement of the same candidate source (classified like kj compare).
#pragma once

#include "reports/compare.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::reports {

struct history_entry {
  result_row row;
  std::string torch;                    // the stack's torch version
  std::string device_name;              // the stack's device
  std::optional<comparison_row> change; // against the previous entry with the same candidate source
};

// PROBLEM is LEVEL:ID (e.g. 1:19), a file name (19_ReLU.py), its stem (19_ReLU) or its name (ReLU).
// Entries are ordered by problem, producer, sample, then run date. Throws std::invalid_argument when nothing
// matches.
std::vector<history_entry> history(const db::store& store, const std::string& problem,
                                   const std::string& producer, const metric_options& metrics,
                                   const compare_options& options);

std::string history_text(const std::vector<history_entry>& entries);
std::string history_csv(const std::vector<history_entry>& entries);
nlohmann::json history_json(const std::vector<history_entry>& entries);

} // namespace kj::reports
