// Writers for `kj results`: an aligned table for people, JSON and CSV (versioned) for scripts.
#pragma once

#include "reports/metrics.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace kj::reports {

// table: one line per evaluation, long texts cut; wide: the same, nothing cut; verbose: a block per
// evaluation with the whole error text; json, csv: every field, for scripts.
enum class results_format { table, wide, verbose, json, csv };

// Throws std::invalid_argument for anything but "table", "wide", "verbose", "json" or "csv".
results_format parse_results_format(const std::string& name);

// The version of the JSON and CSV layouts: each JSON record and each CSV row carries it. 1: the fields before
// versioning; 2: adds, per timing, the sample count and the headline's interval, speedup intervals, stack,
// protocol and dtype (docs/reports.md lists them).
inline constexpr int results_format_version = 3; // 3: reason, memory, phases

void write_results(const std::vector<result_row>& rows, results_format format, std::ostream& out);

// Whether a row's verdict is among `verdicts` (comma-separated compatible verdicts, e.g. "incorrect,timeout";
// also "failed": not counted correct, "passed": counted correct, "strict-fail": the strict verdict failed).
bool verdict_matches(const result_row& row, const std::string& verdicts);

// One record of the JSON format (also the per-problem records of `kj report`'s report.json).
nlohmann::json result_json(const result_row& row);

// RFC 4180 quoting of one CSV field.
std::string csv_field(const std::string& text);

} // namespace kj::reports
