// Sections written in their own files: the stacks table, the charts and Table 1 of index.html, and the agent
// trajectory of an evaluation page.
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

// The built-in agent's trajectory whose re-measurement the evaluation is: its header (status, budget use,
// selection, in-loop vs re-measured speedup) and every turn with kj's notes, the model's text and thinking,
// each tool call and its result, all escaped. "" when the evaluation is no trajectory's result.
std::string trajectory_section(const db::store& store, std::int64_t evaluation_id);

} // namespace kj::reports::detail
