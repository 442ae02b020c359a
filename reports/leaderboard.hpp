// The leaderboard: per producer (model, agent, import) and level, pass rates, faster-than rates (plain and
// noise-aware), geometric-mean speedups, the fast_p curve, token cost per solved problem, crashes and
// timeouts. docs/reports.md defines every column.
#pragma once

#include "reports/metrics.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kj::reports {

// The baselines the leaderboard has columns for; "best" is the fastest of each evaluation's baselines.
inline const std::vector<std::string> leaderboard_baselines = {"eager", "compile-default", "max-autotune",
                                                               "max-autotune-no-cudagraphs", "best"};

// Token use and cost of producing one candidate (LLM adapters and the agent; absent for imports).
struct usage {
  double input_tokens = 0;
  double output_tokens = 0;
  std::optional<double> cost_usd;
};
using usage_map = std::map<std::int64_t, usage>; // by candidate id

struct rate {
  std::size_t count = 0;
  std::size_t total = 0;
  std::optional<double> value() const; // count / total; none when total is 0
};

struct baseline_column {
  std::string baseline;
  std::size_t with_speedup = 0;          // counted-correct evaluations with a speedup against this baseline
  rate faster;                           // counted correct and speedup > 1, over all evaluations
  rate faster_noise_aware;               // counted correct and the speedup's interval lies above 1
  std::optional<double> geomean_correct; // over counted-correct evaluations with a speedup
  std::optional<double> geomean_all;     // over all evaluations, 1.0 for the others
  std::vector<double> fast_p;            // fast_p(p) at fast_p_grid()
};

// The level of a row over all levels (level 0 is a real level: CUDA-Agent-Ops-6K's problems).
inline constexpr int all_levels = -1;

struct leaderboard_row {
  std::string producer;
  int level = all_levels;
  std::size_t evaluations = 0;
  std::size_t not_judged = 0; // kj's own failures and problem errors: in no rate's total
  std::size_t problems = 0;
  rate pass_compatible; // compatible verdict correct
  rate pass_strict;     // counted correct (compatible correct and strict not failed); total: strict ran
  std::vector<baseline_column> baselines; // in leaderboard_baselines order
  std::map<std::string, std::size_t> verdicts;
  std::size_t crashes = 0;  // crashed
  std::size_t timeouts = 0; // timeout
  std::size_t with_usage = 0;
  std::optional<double> tokens_per_solved;  // (input + output tokens) / counted correct
  std::optional<double> cost_per_solved;    // [USD]
  std::vector<std::int64_t> evaluation_ids; // provenance

  const baseline_column& column(const std::string& baseline) const;
};

// 0, 0.05, ..., 3.0.
std::vector<double> fast_p_grid();

// One row per producer and level present, then one per producer over all levels (all_levels); producers
// sorted by name.
std::vector<leaderboard_row> leaderboard(const std::vector<result_row>& rows, const usage_map& usage = {});

} // namespace kj::reports
