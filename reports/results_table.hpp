// Writers for `kj results`: an aligned table for people, JSON and CSV (versioned) for scripts, and the table
// of formats.
#pragma once

#include "reports/metrics.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace kj::reports {

// One output format of `kj results` (and of the rows other commands print): its name, one line for --format's
// help, and its writer. The formats are one table (reports/results_writers.cpp); a new one is a writer in a
// file of its own and a line there.
struct results_writer {
  std::string_view name;
  std::string_view help;
  void (*write)(const std::vector<result_row>& rows, std::ostream& out);
  bool for_scripts = false; // a machine-readable layout: nothing but the rows on stdout
};

// Every format, in the order --format's help lists them.
const std::vector<results_writer>& results_writers();

// The format named `name`; throws std::invalid_argument naming the formats there are.
const results_writer& results_writer_named(const std::string& name);

// The version of the JSON and CSV layouts: each JSON record and each CSV row carries it. 1: the fields before
// versioning; 2: adds, per timing, the sample count and the headline's interval, speedup intervals, stack,
// protocol and dtype (docs/reports.md lists them).
// 3: reason, memory, phases; 4: the CSV's noise mark; 5: sizes; 6: numerics, speedup_matched
inline constexpr int results_format_version = 6;

// The rows in the format named `format` (results_writer_named).
void write_results(const std::vector<result_row>& rows, const std::string& format, std::ostream& out);

// Whether a row's verdict is among `verdicts` (comma-separated compatible verdicts, e.g. "incorrect,timeout";
// also "failed": not counted correct, "passed": counted correct, "strict-fail": the strict verdict failed).
bool verdict_matches(const result_row& row, const std::string& verdicts);

// One record of the JSON format (also the per-problem records of `kj report`'s report.json).
nlohmann::json result_json(const result_row& row);

// RFC 4180 quoting of one CSV field.
std::string csv_field(const std::string& text);

} // namespace kj::reports
