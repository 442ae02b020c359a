// Summary statistics of timing samples and the distribution-free confidence interval of their median.
#pragma once

#include <cstddef>
#include <span>

namespace kj::timing {

// A summary of one set of samples. Every value is in the unit of the samples: [ms] throughout kerneljudge.
// Quantiles interpolate linearly between order statistics (numpy's default, "type 7").
struct summary {
  std::size_t n = 0;
  double median = 0; // the headline number
  double mean = 0;
  double min = 0;
  double max = 0;
  double stdev = 0; // sample standard deviation (n - 1 in the denominator); 0 when n == 1
  double p5 = 0;
  double p25 = 0;
  double p75 = 0;
  double p95 = 0;
  double iqr = 0; // p75 - p25
  // Confidence interval of the median from order statistics (see median_ci_ranks).
  double ci_low = 0;
  double ci_high = 0;
  // (ci_high - ci_low) / 2 / median; +infinity when the interval cannot reach the requested confidence
  // (too few samples, e.g. n < 6 at 95%) or when the median is 0 and the interval is not a point.
  double ci_rel_halfwidth = 0;
  // The coverage the reported interval actually has (>= the requested confidence whenever it is reachable;
  // order statistics give only discrete levels, so it is usually a little above).
  double ci_coverage = 0;
};

// The ranks of the order statistics that bound a confidence interval of the median.
struct median_ci_ranks_result {
  std::size_t low = 0;  // 0-based index into the sorted samples
  std::size_t high = 0; // 0-based index into the sorted samples, high = n - 1 - low
  double coverage = 0;  // P(x[low] <= true median <= x[high]) for continuous data
  bool reached = false; // coverage >= the requested confidence
};

// The symmetric interval [x(j), x(n+1-j)] (1-based ranks) with the largest j whose coverage
// 1 - 2 P(B <= j - 1), B ~ Binomial(n, 1/2), is at least `confidence`. Exact binomial for n <= 1000,
// the normal approximation with continuity correction above (it is then conservative by at most one rank).
// When no j reaches the confidence, the widest interval [x(1), x(n)] is returned with reached == false.
// Throws std::invalid_argument when n == 0 or confidence is outside (0, 1).
median_ci_ranks_result median_ci_ranks(std::size_t n, double confidence);

// The p-quantile (0 <= p <= 1) of sorted, non-empty samples, interpolated linearly like numpy's default.
double quantile_sorted(std::span<const double> sorted, double p);

// (x[high] - x[low]) / 2 / median for sorted, non-empty samples; see summary::ci_rel_halfwidth.
double median_ci_rel_halfwidth(std::span<const double> sorted, double confidence);

// Summarizes the samples (any order). Throws std::invalid_argument when there are none, when one is NaN or
// infinite, or when confidence is outside (0, 1).
summary summarize(std::span<const double> samples, double confidence = 0.95);

} // namespace kj::timing
