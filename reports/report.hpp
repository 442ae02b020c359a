// `kj report`: from the DB alone, a folder with a self-contained offline index.html (leaderboard, fast_p
// chart, the paper's Table 1 on this machine, per-problem table), one page per evaluation (escaped source,
// kernel trace, timings with their DB rows), and the same numbers as CSV and JSON.
#pragma once

#include "db/store.hpp"
#include "reports/leaderboard.hpp"
#include "reports/metrics.hpp"
#include "reports/paper_table.hpp"

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::reports {

// The version of report.json's layout.
inline constexpr int report_format_version = 1;

struct report_options {
  std::vector<std::string> runs; // run ids; empty: the latest run, or every run with all_runs
  bool all_runs = false;
  std::string producer; // only this producer ("" = all)
  std::filesystem::path out_dir;
  std::string chartjs;    // Chart.js file to inline ("" = look for it: html::find_chartjs)
  std::string kj_version; // of the kj writing the report
  metric_options metrics;
  usage_map usage; // token use per candidate, when a producer recorded it
  // Applied to the rows before anything is derived from them (the CLI's verified-set marks and filter).
  std::function<void(std::vector<result_row>&)> adjust_rows;
};

struct report_data {
  std::filesystem::path db_path;
  std::string generated_at;
  std::string kj_version;
  std::vector<db::run_row> runs;                   // the runs the rows came from
  std::map<std::int64_t, db::stack_record> stacks; // by id
  std::vector<result_row> rows;                    // newest evaluation of each (producer, problem, sample)
  std::vector<leaderboard_row> board;
  table1 table_compatible;
  table1 table_strict;
  published_table published;
  usage_map usage;
  std::vector<std::string> warnings; // e.g. two candidate folders under one producer label, reported apart
};

// Reads and derives everything; throws std::invalid_argument for a run id the DB does not hold.
report_data build_report(const db::store& store, const report_options& options);

struct report_output {
  std::vector<std::filesystem::path> files; // everything written
  std::filesystem::path chartjs;            // inlined, or empty when charts were left out
  std::vector<std::string> chartjs_tried;
};

// Writes index.html, e/<evaluation id>.html, leaderboard.csv, problems.csv, table1.csv, fast_p.csv and
// report.json under options.out_dir (created when missing).
report_output write_report(const db::store& store, const report_data& data, const report_options& options);

// The summary of where a set of numbers came from (timer, statistic, dtype, protocol, stacks, runs, rows).
std::string provenance_text(const std::vector<const result_row*>& rows);

// Pieces of the writers shared between files (report_html.cpp, report_pages.cpp, report_files.cpp).
namespace detail {
std::string index_html(const report_data& data, const std::string& chartjs_text,
                       const std::vector<std::string>& chartjs_tried);
std::string evaluation_page(const db::store& store, const report_data& data, const result_row& row);
nlohmann::json report_json(const report_data& data);
void write_csvs(const report_data& data, const std::filesystem::path& dir,
                std::vector<std::filesystem::path>& written);
} // namespace detail

} // namespace kj::reports
