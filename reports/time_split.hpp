// Where an evaluation's time went: the phases of a set of evaluations, summed (kj run's last line, kj show).
#pragma once

#include "reports/metrics.hpp"

#include <map>
#include <string>
#include <vector>

namespace kj::reports {

struct time_split {
  std::map<std::string, double> seconds; // [s] per phase, summed over the evaluations
  double total_s = 0;                    // [s] their sum
  std::size_t evaluations = 0;           // those that recorded phases
};

time_split split_time(const std::vector<result_row>& rows);

// "where the time went: strict 41%, start 30%, ... of 612 s in 12 evaluations"; "" when nothing was recorded.
std::string time_split_line(const time_split& split);

} // namespace kj::reports
