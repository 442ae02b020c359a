// Implements the handshake bound, the per-call charge and the draw check.
#include "timing/clock_bound.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace kj::timing {
namespace {

double quantile(std::vector<double> v, double q) { // nearest rank on a sorted copy
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

} // namespace

handshake_bound bound_of_handshake(std::vector<double> overheads_ms) {
  handshake_bound b;
  overheads_ms.erase(
      std::remove_if(overheads_ms.begin(), overheads_ms.end(), [](double v) { return !(v >= 0) || v > 1e6; }),
      overheads_ms.end());
  if (overheads_ms.empty()) {
    b.allowance_ms = 0.2;
    return b;
  }
  b.calibrated = true;
  b.floor_ms = *std::min_element(overheads_ms.begin(), overheads_ms.end());
  b.median_ms = quantile(overheads_ms, 0.5);
  b.allowance_ms = 2 * b.median_ms + 0.02;
  return b;
}

call_charge charge_call(double sample_ms, double bracket_ms, const handshake_bound& bound) {
  call_charge c;
  c.credited_ms = std::max(sample_ms, bracket_ms - bound.allowance_ms);
  c.charge_ms = c.credited_ms - sample_ms;
  return c;
}

calls_check check_calls(const std::vector<double>& raw_ms, const std::vector<double>& charges_ms,
                        const handshake_bound& bound) {
  calls_check c;
  std::vector<double> charged;
  for (double v : charges_ms) {
    c.total_charge_ms += v;
    if (v > 0) charged.push_back(v);
  }
  c.charged = charged.size();
  c.median_charge_ms = quantile(charges_ms, 0.5);
  const double median_raw = quantile(raw_ms, 0.5);
  if (2 * c.charged <= charges_ms.size() ||
      c.median_charge_ms <= std::max(bound.allowance_ms, 0.1 * median_raw))
    return c;
  c.systematic = true;
  c.reason = fmt::format(
      "the judge's clock charged {} of {} calls, {:.3f} ms at the median beyond the handshake's cost ({:.3f} "
      "ms; median sample {:.3f} ms): the candidate's timer under-reported, or the host delayed the "
      "handshakes; the charged time is what is credited",
      c.charged, charges_ms.size(), c.median_charge_ms, bound.allowance_ms, median_raw);
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
