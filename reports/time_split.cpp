// Implements the time split: phases_json of each result row, summed and shown as shares.
#include "reports/time_split.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <utility>

namespace kj::reports {

time_split split_time(const std::vector<result_row>& rows) {
  time_split split;
  for (const auto& r : rows) {
    if (r.phases_json.empty()) continue;
    const auto phases = nlohmann::json::parse(r.phases_json, nullptr, false);
    if (!phases.is_object()) continue;
    ++split.evaluations;
    for (const auto& [phase, seconds] : phases.items())
      if (seconds.is_number()) {
        split.seconds[phase] += seconds.get<double>();
        split.total_s += seconds.get<double>();
      }
  }
  return split;
}

std::string time_split_line(const time_split& split) {
  if (split.total_s <= 0) return "";
  std::vector<std::pair<std::string, double>> order(split.seconds.begin(), split.seconds.end());
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string parts;
  for (const auto& [phase, seconds] : order)
    parts += fmt::format("{}{} {:.0f}%", parts.empty() ? "" : ", ", phase, 100 * seconds / split.total_s);
  return fmt::format("where the time went: {} of {:.0f} s in {} evaluations", parts, split.total_s,
                     split.evaluations);
}

} // namespace kj::reports
