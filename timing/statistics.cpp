// Implements summarize() and the order-statistic confidence interval of the median.
#include "timing/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::timing {

namespace {

// Up to here 2^-n is a normal double and summing the binomial terms costs at most n/2 multiplications.
constexpr std::size_t k_exact_binomial_max_n = 1000;

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {
    throw std::invalid_argument("timing statistics: confidence must be in (0, 1), got " +
                                std::to_string(confidence));
  }
}

double standard_normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// The z with P(Z > z) = upper_tail, by bisection: called once per interval, so simplicity beats speed.
double standard_normal_upper_quantile(double upper_tail) {
  double low = -40.0;
  double high = 40.0;
  for (int i = 0; i < 200 && high - low > 1e-12; ++i) {
    const double mid = 0.5 * (low + high);
    if (1.0 - standard_normal_cdf(mid) > upper_tail) {
      low = mid;
    } else {
      high = mid;
    }
  }
  return 0.5 * (low + high);
}

// The largest 1-based lower rank j with P(B <= j - 1) <= tail, and that probability; j == 0 if none.
std::pair<std::size_t, double> exact_lower_rank(std::size_t n, double tail) {
  double cdf = 0.0;
  double pmf = std::ldexp(1.0, -static_cast<int>(n)); // P(B = 0)
  std::size_t j = 0;
  while (j < n && cdf + pmf <= tail) {
    cdf += pmf;
    pmf *= static_cast<double>(n - j) / static_cast<double>(j + 1);
    ++j;
  }
  return {j, cdf};
}

std::pair<std::size_t, double> normal_lower_rank(std::size_t n, double tail) {
  const double z = standard_normal_upper_quantile(tail);
  const double nd = static_cast<double>(n);
  // P(B <= j - 1) ~ Phi((j - 1/2 - n/2) / (sqrt(n)/2)) <= tail  <=>  j <= (n + 1 - z sqrt(n)) / 2.
  const double j = std::floor((nd + 1.0 - z * std::sqrt(nd)) / 2.0);
  if (j < 1.0) return {0, 0.0};
  return {static_cast<std::size_t>(j), standard_normal_cdf((j - 0.5 - nd / 2.0) / (std::sqrt(nd) / 2.0))};
}

} // namespace

median_ci_ranks_result median_ci_ranks(std::size_t n, double confidence) {
  check_confidence(confidence);
  if (n == 0) throw std::invalid_argument("timing statistics: the median of zero samples has no interval");
  const double tail = (1.0 - confidence) / 2.0;
  const auto [j, lower_tail] =
      n <= k_exact_binomial_max_n ? exact_lower_rank(n, tail) : normal_lower_rank(n, tail);
  if (j == 0) {
    // [x(1), x(n)] misses the median only when all samples fall on one side of it: 2 * 2^-n.
    const double coverage = n >= 64 ? 1.0 : 1.0 - std::ldexp(1.0, 1 - static_cast<int>(n));
    return {0, n - 1, coverage, false};
  }
  return {j - 1, n - j, 1.0 - 2.0 * lower_tail, true};
}

double quantile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) throw std::invalid_argument("timing statistics: the quantile of zero samples");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("timing statistics: quantile outside [0, 1]");
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  if (below + 1 >= sorted.size()) return sorted.back();
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

double median_ci_rel_halfwidth(std::span<const double> sorted, double confidence) {
  const auto ranks = median_ci_ranks(sorted.size(), confidence);
  if (!ranks.reached) return std::numeric_limits<double>::infinity();
  const double halfwidth = (sorted[ranks.high] - sorted[ranks.low]) / 2.0;
  const double median = std::abs(quantile_sorted(sorted, 0.5));
  if (median == 0.0) return halfwidth == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return halfwidth / median;
}

summary summarize(std::span<const double> samples, double confidence) {
  check_confidence(confidence);
  if (samples.empty()) {
    throw std::invalid_argument(
        "timing statistics: cannot summarize zero samples (did the measurement run?)");
  }
  if (!std::all_of(samples.begin(), samples.end(), [](double x) { return std::isfinite(x); })) {
    throw std::invalid_argument("timing statistics: a sample is NaN or infinite");
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const auto n = sorted.size();

  summary s;
  s.n = n;
  s.min = sorted.front();
  s.max = sorted.back();
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    // Two passes: the deviations are small next to the values, so this keeps their precision.
    double squares = 0.0;
    for (const double x : sorted)
      squares += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  s.median = quantile_sorted(sorted, 0.5);
  s.p5 = quantile_sorted(sorted, 0.05);
  s.p25 = quantile_sorted(sorted, 0.25);
  s.p75 = quantile_sorted(sorted, 0.75);
  s.p95 = quantile_sorted(sorted, 0.95);
  s.iqr = s.p75 - s.p25;

  const auto ranks = median_ci_ranks(n, confidence);
  s.ci_low = sorted[ranks.low];
  s.ci_high = sorted[ranks.high];
  s.ci_coverage = ranks.coverage;
  s.ci_rel_halfwidth = median_ci_rel_halfwidth(sorted, confidence);
  return s;
}

} // namespace kj::timing
