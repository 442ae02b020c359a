// Implements the leaderboard aggregation (see leaderboard.hpp; definitions in docs/reports.md).
#include "reports/leaderboard.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

namespace kj::reports {

std::optional<double> rate::value() const {
  if (total == 0) return std::nullopt;
  return static_cast<double>(count) / static_cast<double>(total);
}

const baseline_column& leaderboard_row::column(const std::string& baseline) const {
  for (const auto& c : baselines)
    if (c.baseline == baseline) return c;
  throw std::out_of_range("no leaderboard column for baseline '" + baseline + "'");
}

std::vector<double> fast_p_grid() {
  std::vector<double> grid;
  for (int i = 0; i <= 60; ++i)
    grid.push_back(0.05 * i);
  return grid;
}

namespace {

std::optional<double> geomean_of(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  const double g = stats::geomean(values);
  return std::isfinite(g) ? std::optional<double>(g) : std::nullopt;
}

baseline_column column_for(const std::string& baseline, const std::vector<const result_row*>& rows) {
  baseline_column c;
  c.baseline = baseline;
  std::vector<double> correct, all;
  const auto grid = fast_p_grid();
  c.fast_p.assign(grid.size(), 0.0);
  for (const result_row* r : rows) {
    const auto s = r->counted_correct() ? r->speedup_vs(baseline) : std::nullopt;
    all.push_back(s ? *s : 1.0);
    if (!s) continue;
    ++c.with_speedup;
    correct.push_back(*s);
    if (*s > 1) ++c.faster.count;
    if (r->speedup_ci_vs(baseline).valid() && r->speedup_ci_vs(baseline).low > 1 && !timing_doubtful(*r))
      ++c.faster_noise_aware.count;
    for (std::size_t i = 0; i < grid.size(); ++i)
      if (*s > grid[i]) c.fast_p[i] += 1;
  }
  c.faster.total = c.faster_noise_aware.total = rows.size();
  for (double& f : c.fast_p)
    f = rows.empty() ? 0.0 : f / static_cast<double>(rows.size());
  c.geomean_correct = geomean_of(correct);
  if (c.with_speedup > 0) c.geomean_all = geomean_of(all);
  return c;
}

leaderboard_row row_for(const std::string& producer, int level, const std::vector<const result_row*>& rows,
                        const usage_map& usage) {
  leaderboard_row out;
  out.producer = producer;
  out.level = level;
  out.evaluations = rows.size();
  std::set<std::string> problems;
  bool strict_ran = false;
  double tokens = 0, cost = 0;
  bool any_cost = false;
  std::size_t judged = 0;
  for (const result_row* r : rows) {
    problems.insert(r->problem_key());
    out.evaluation_ids.push_back(r->evaluation_id);
    ++out.verdicts[name_of(r->verdict)];
    judged += r->judged() ? 1 : 0;
    if (r->verdict == kj::verdict::crashed) ++out.crashes;
    if (r->verdict == kj::verdict::timeout) ++out.timeouts;
    if (r->verdict == kj::verdict::correct) ++out.pass_compatible.count;
    if (r->strict_verdict != kj::strict_verdict::none) strict_ran = true;
    if (r->counted_correct() && r->strict_verdict == kj::strict_verdict::pass) ++out.pass_strict.count;
    if (auto it = usage.find(r->candidate_id); it != usage.end()) {
      ++out.with_usage;
      tokens += it->second.input_tokens + it->second.output_tokens;
      if (it->second.cost_usd) {
        any_cost = true;
        cost += *it->second.cost_usd;
      }
    }
  }
  out.problems = problems.size();
  out.not_judged = rows.size() - judged;
  out.pass_compatible.total = judged; // kj's own failures are never the candidate's
  out.pass_strict.total = strict_ran ? judged : 0;
  std::vector<const result_row*> judged_rows; // the speedup columns' population too
  for (const result_row* r : rows)
    if (r->judged()) judged_rows.push_back(r);
  for (const auto& baseline : leaderboard_baselines)
    out.baselines.push_back(column_for(baseline, judged_rows));
  std::size_t solved = 0;
  for (const result_row* r : rows)
    solved += r->counted_correct() ? 1 : 0;
  if (out.with_usage > 0 && solved > 0) {
    out.tokens_per_solved = tokens / static_cast<double>(solved);
    if (any_cost) out.cost_per_solved = cost / static_cast<double>(solved);
  }
  return out;
}

} // namespace

std::vector<leaderboard_row> leaderboard(const std::vector<result_row>& rows, const usage_map& usage) {
  std::map<std::string, std::map<int, std::vector<const result_row*>>> groups;
  for (const auto& r : rows) {
    groups[r.producer][r.level].push_back(&r);
    groups[r.producer][all_levels].push_back(&r);
  }
  std::vector<leaderboard_row> out;
  for (const auto& [producer, levels] : groups) {
    for (const auto& [level, members] : levels)
      if (level != all_levels) out.push_back(row_for(producer, level, members, usage));
    out.push_back(row_for(producer, all_levels, levels.at(all_levels), usage));
  }
  return out;
}

} // namespace kj::reports
