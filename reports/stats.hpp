// The statistics behind reports and `kj compare`: headline statistics of raw samples, seeded bootstrap
// intervals of ratios, the Mann–Whitney U test, Benjamini–Hochberg adjustment and geometric means.
// docs/reports.md gives the definitions and why each was chosen.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace kj::reports::stats {

// The statistic a timing reports: its "headline" (median for method robust, mean for kernelbench/cuda-agent).
enum class statistic { median, mean };

// "median" or "mean"; anything else throws std::invalid_argument.
statistic parse_statistic(const std::string& name);
const char* statistic_name(statistic s);

// The statistic of non-empty samples (median: linear interpolation, numpy's default, as kj::timing).
double compute(statistic s, std::span<const double> samples);

struct interval {
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  bool valid() const { return low == low && high == high; } // NaN-free
  bool excludes(double value) const { return valid() && (low > value || high < value); }
};

struct bootstrap_options {
  int replicates = 2000;
  double confidence = 0.95;
  std::uint64_t seed = 20260101;
};

// Draws the statistic of bootstrap resamples of one set of samples. The median of a resample is drawn through
// its order statistics (U(k) ~ Beta(k, n - k + 1) mapped through the empirical quantile function), which
// has exactly the distribution of the median of n draws with replacement at O(1) per replicate; the mean
// is resampled directly.
class resampler {
public:
  resampler(std::span<const double> samples, statistic s);
  double draw(std::mt19937_64& rng) const;
  std::size_t size() const { return m_sorted.size(); }

private:
  double at(double u) const; // the empirical quantile function F_n^{-1}(u)
  std::vector<double> m_sorted;
  statistic m_statistic;
};

// Percentile bootstrap interval of stat(numerator) / stat(denominator), the two sides resampled
// independently. Invalid (NaN) when either side is empty or a replicate's denominator is 0.
interval bootstrap_ratio(std::span<const double> numerator, std::span<const double> denominator, statistic s,
                         const bootstrap_options& options);

// Percentile bootstrap interval of (stat(a) / stat(b)) / (stat(c) / stat(d)), the four resampled
// independently: a change measured against a control timed in the same processes (kj compare).
interval bootstrap_ratio_of_ratios(std::span<const double> a, std::span<const double> b,
                                   std::span<const double> c, std::span<const double> d, statistic s,
                                   const bootstrap_options& options);

// Percentile bootstrap interval of one side's statistic.
interval bootstrap_statistic(std::span<const double> samples, statistic s, const bootstrap_options& options);

// The p-quantile of values (sorted in place), linear interpolation; NaN when empty.
double percentile(std::vector<double>& values, double p);

struct mann_whitney_result {
  double u = 0; // U of the first sample: pairs (a, b) with a > b, ties counting 1/2
  double z = 0; // normal approximation with tie and continuity correction
  double p = 1; // two-sided p-value
};

// The Mann–Whitney U (Wilcoxon rank-sum) test of two independent samples. p = 1 when either is empty or
// every value is tied.
mann_whitney_result mann_whitney(std::span<const double> a, std::span<const double> b);

// Benjamini–Hochberg adjusted p-values (q-values), in the input's order; NaN inputs stay NaN and are not
// counted as tests.
std::vector<double> benjamini_hochberg(std::span<const double> p);

// exp(mean(log x)) of positive values; NaN when empty or any value is not positive.
double geomean(std::span<const double> values);

// A seed for one named quantity (FNV-1a of the key mixed with the base seed), so that every interval is
// reproducible and independent of the order in which a report computes them.
std::uint64_t seed_for(const std::string& key, std::uint64_t base);

} // namespace kj::reports::stats
