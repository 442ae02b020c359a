// Sections of index.html written in their own files: the stacks table, the charts and Table 1.
#pragma once

#include "reports/report.hpp"

#include <string>
#include <vector>

namespace kj::reports::detail {

// The stacks the rows were measured on, with the fingerprint fields a reader compares first.
std::string stacks_table(const report_data& data);

// The fast_p chart and the per-problem speedup chart, drawn by the inlined Chart.js; a note naming the
// package when Chart.js was not found. Our script carries the page's nonce.
std::string charts_section(const report_data& data, const std::string& chartjs_text,
                           const std::vector<std::string>& chartjs_tried, const std::string& nonce);

// Table 1 of the CUDA Agent paper: ours (compatible and strict) with intervals, next to the published rows.
std::string table1_section(const report_data& data);

} // namespace kj::reports::detail
