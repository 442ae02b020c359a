// Implements check_against_wall.
#include "timing/clock_bound.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace kj::timing {
namespace {

double overhead_per_call(const round_clock& r) {
  if (r.calls == 0) return 0;
  return std::max(0.0, r.wall_ms - r.samples_ms - r.warmup_ms) / static_cast<double>(r.calls);
}

} // namespace

clock_check check_against_wall(const round_clock& candidate, const round_clock& reference,
                               double candidate_median_ms, double copies_ms) {
  clock_check c;
  if (candidate.calls == 0) return c;
  const double reference_overhead = overhead_per_call(reference);
  c.unaccounted_ms = overhead_per_call(candidate) - reference_overhead -
                     std::max(0.0, copies_ms) / static_cast<double>(candidate.calls);
  const double wall_per_call = candidate.wall_ms / static_cast<double>(candidate.calls);
  c.allowance_ms =
      std::max({2.0 * candidate_median_ms, 0.5 * reference_overhead, 0.25 * wall_per_call, 0.05});
  if (c.unaccounted_ms <= c.allowance_ms) return c;
  c.charge_ms = c.unaccounted_ms - c.allowance_ms;
  c.credited = c.charge_ms <= candidate_median_ms;
  c.reason = fmt::format(
      "the judge's clock saw {:.3f} ms per timed call more than the candidate's timer accounts for (its "
      "median sample {:.3f} ms; noise allows {:.3f} ms): {}",
      c.unaccounted_ms, candidate_median_ms, c.allowance_ms,
      c.credited ? fmt::format("{:.3f} ms per call charged to the candidate", c.charge_ms)
                 : std::string("the timer in the candidate's process under-reported"));
  return c;
}

clock_check check_draws(double runner_ms, double judge_ms, double judge_spread_ms) {
  clock_check c;
  c.unaccounted_ms = runner_ms - judge_ms;
  c.allowance_ms = 0.2 * judge_ms + 0.05 + std::max(0.0, judge_spread_ms);
  if (c.unaccounted_ms <= c.allowance_ms) return c;
  c.credited = false;
  c.charge_ms = c.unaccounted_ms - c.allowance_ms;
  c.reason = fmt::format(
      "kj's input draw took {:.3f} ms per timed call in the candidate's process and {:.3f} ms "
      "in the judge (noise allows {:.3f} ms): {:.3f} ms per call charged to the candidate as work "
      "outside the timed window",
      runner_ms, judge_ms, c.allowance_ms, c.charge_ms);
  return c;
}

} // namespace kj::timing
