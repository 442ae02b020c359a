// Checks by simulation that the median's confidence interval covers the true median at its stated rate.
#include "tests/support/catch_compat.hpp"
#include "timing/statistics.hpp"

#include <cmath>
#include <random>
#include <vector>

using kj::timing::median_ci_ranks;
using kj::timing::summarize;

namespace {

struct coverage_run {
  double observed = 0; // fraction of repetitions whose interval held the true median
  double expected = 0; // the interval's exact coverage for continuous data
  double standard_error = 0;
};

// Draws `repetitions` sets of n samples from the distribution and counts the intervals that hold `median`.
template <typename distribution>
coverage_run simulate(std::size_t n, int repetitions, distribution dist, double median, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<double> samples(n);
  int covered = 0;
  for (int r = 0; r < repetitions; ++r) {
    for (double& x : samples)
      x = dist(rng);
    const auto s = summarize(samples, 0.95);
    if (s.ci_low <= median && median <= s.ci_high) ++covered;
  }
  coverage_run run;
  run.observed = static_cast<double>(covered) / repetitions;
  run.expected = median_ci_ranks(n, 0.95).coverage;
  run.standard_error = std::sqrt(run.expected * (1 - run.expected) / repetitions);
  return run;
}

void check_coverage(const coverage_run& run) {
  INFO("observed " << run.observed << ", expected " << run.expected << " +- " << run.standard_error);
  // Order statistics give discrete levels just above the nominal 95% (0.959 at n = 20, 0.967 at n = 50):
  // compare with that exact level, allowing 4 standard errors, and bound it to "about 95%".
  CHECK(run.expected >= 0.95);
  CHECK(run.expected < 0.975);
  CHECK(std::abs(run.observed - run.expected) <= 4 * run.standard_error);
  CHECK(run.observed >= 0.93);
}

} // namespace

TEST_CASE("median CI coverage on lognormal samples, n = 50", "[timing][statistics][coverage]") {
  // A timing-like, right-skewed distribution; the median of lognormal(0, 0.5) is exp(0) = 1.
  check_coverage(simulate(50, 1000, std::lognormal_distribution<double>(0.0, 0.5), 1.0, 20240501));
  check_coverage(simulate(50, 4000, std::lognormal_distribution<double>(0.0, 0.5), 1.0, 7));
}

TEST_CASE("median CI coverage on small and large samples", "[timing][statistics][coverage]") {
  SECTION("n = 20, exact binomial ranks") {
    check_coverage(simulate(20, 4000, std::lognormal_distribution<double>(0.0, 1.0), 1.0, 11));
  }
  SECTION("n = 1000, the last exact size") {
    check_coverage(simulate(1000, 2000, std::lognormal_distribution<double>(0.0, 0.5), 1.0, 12));
  }
  SECTION("n = 2000, normal approximation") {
    check_coverage(simulate(2000, 2000, std::lognormal_distribution<double>(0.0, 0.5), 1.0, 13));
  }
  SECTION("n = 100, heavy-tailed exponential (median ln 2)") {
    check_coverage(simulate(100, 4000, std::exponential_distribution<double>(1.0), std::log(2.0), 14));
  }
}

TEST_CASE("median CI coverage holds at other confidence levels", "[timing][statistics][coverage]") {
  std::mt19937 rng(99);
  std::normal_distribution<double> dist(5.0, 1.0);
  std::vector<double> samples(200);
  int covered = 0;
  const int repetitions = 4000;
  for (int r = 0; r < repetitions; ++r) {
    for (double& x : samples)
      x = dist(rng);
    const auto s = summarize(samples, 0.80);
    if (s.ci_low <= 5.0 && 5.0 <= s.ci_high) ++covered;
  }
  const double expected = median_ci_ranks(200, 0.80).coverage;
  const double observed = static_cast<double>(covered) / repetitions;
  INFO("observed " << observed << ", expected " << expected);
  CHECK(expected >= 0.80);
  CHECK(std::abs(observed - expected) <= 4 * std::sqrt(expected * (1 - expected) / repetitions));
}
