// Producer labels that collide: two runs of different candidate folders with one label (v1/claude and
// v2/claude are both "claude") are told apart before rows are matched by (producer, problem, sample).
#pragma once

#include "db/rows.hpp"
#include "reports/metrics.hpp"

#include <string>
#include <vector>

namespace kj::reports {

// Relabels the rows of runs whose producer label names more than one candidate folder (runs.config_json's
// "candidates") with the shortest trailing part of the folder's path that tells them apart ("v1/claude");
// returns one warning per relabelled label. Rows of one folder keep their label (a rerun replaces).
std::vector<std::string> separate_colliding_producers(std::vector<result_row>& rows,
                                                      const std::vector<db::run_row>& runs);

// The shortest trailing parts (at least the last component) of `paths` that are pairwise distinct, in order.
std::vector<std::string> distinguishing_suffixes(const std::vector<std::string>& paths);

} // namespace kj::reports
