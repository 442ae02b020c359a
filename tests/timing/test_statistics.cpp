// Tests summarize(), quantile_sorted() and median_ci_ranks() against values computed with numpy and exact
// binomials.
#include "tests/support/catch_compat.hpp"
#include "timing/statistics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using kj::timing::median_ci_ranks;
using kj::timing::quantile_sorted;
using kj::timing::summarize;

// Expected quantiles: numpy 2.4 `np.quantile(a, [0.05, 0.25, 0.5, 0.75, 0.95])` (method "linear"), and
// `a.mean()`, `a.std(ddof=1)`.
TEST_CASE("summarize matches numpy on ten samples", "[timing][statistics]") {
  const std::vector<double> samples{0.91, 1.02, 0.87, 1.5, 1.01, 0.99, 1.13, 0.95, 2.4, 1.0};
  const auto s = summarize(samples);
  CHECK(s.n == 10);
  CHECK(s.min == 0.87);
  CHECK(s.max == 2.4);
  CHECK(s.mean == Approx(1.1780000000000002));
  CHECK(s.stdev == Approx(0.46405938317322176));
  CHECK(s.p5 == Approx(0.888));
  CHECK(s.p25 == Approx(0.96));
  CHECK(s.median == Approx(1.005));
  CHECK(s.p75 == Approx(1.1025));
  CHECK(s.p95 == Approx(1.994999999999999));
  CHECK(s.iqr == Approx(1.1025 - 0.96));
  // n = 10 at 95%: ranks 2 and 9 (1-based), coverage 1 - 2 * 56/1024.
  CHECK(s.ci_low == 0.91);
  CHECK(s.ci_high == 1.5);
  CHECK(s.ci_coverage == Approx(0.978515625));
  CHECK(s.ci_rel_halfwidth == Approx((1.5 - 0.91) / 2 / 1.005));
}

TEST_CASE("summarize matches numpy on seven samples with ties", "[timing][statistics]") {
  const std::vector<double> samples{3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0};
  const auto s = summarize(samples);
  CHECK(s.n == 7);
  CHECK(s.mean == Approx(3.5714285714285716));
  CHECK(s.stdev == Approx(2.819996622760558));
  CHECK(s.p5 == Approx(1.0));
  CHECK(s.p25 == Approx(1.5));
  CHECK(s.median == Approx(3.0));
  CHECK(s.p75 == Approx(4.5));
  CHECK(s.p95 == Approx(7.799999999999997));
  CHECK(s.ci_low == 1.0); // n = 7: only [min, max] reaches 95% (coverage 1 - 2/128)
  CHECK(s.ci_high == 9.0);
  CHECK(s.ci_coverage == Approx(0.984375));
  CHECK(s.ci_rel_halfwidth == Approx(4.0 / 3.0));
}

TEST_CASE("summarize handles two samples and one sample", "[timing][statistics]") {
  const std::vector<double> two{2.0, 1.0};
  const auto s2 = summarize(two);
  CHECK(s2.n == 2);
  CHECK(s2.median == Approx(1.5));
  CHECK(s2.p5 == Approx(1.05));
  CHECK(s2.p25 == Approx(1.25));
  CHECK(s2.p75 == Approx(1.75));
  CHECK(s2.p95 == Approx(1.95));
  CHECK(s2.stdev == Approx(0.7071067811865476));
  CHECK(s2.ci_low == 1.0);
  CHECK(s2.ci_high == 2.0);
  CHECK(s2.ci_coverage == Approx(0.5));
  CHECK(std::isinf(s2.ci_rel_halfwidth)); // 95% is out of reach with two samples

  const std::vector<double> one{0.25};
  const auto s1 = summarize(one);
  CHECK(s1.n == 1);
  CHECK(s1.median == 0.25);
  CHECK(s1.mean == 0.25);
  CHECK(s1.min == 0.25);
  CHECK(s1.max == 0.25);
  CHECK(s1.p5 == 0.25);
  CHECK(s1.p95 == 0.25);
  CHECK(s1.stdev == 0.0);
  CHECK(s1.iqr == 0.0);
  CHECK(s1.ci_low == 0.25);
  CHECK(s1.ci_high == 0.25);
  CHECK(s1.ci_coverage == 0.0);
  CHECK(std::isinf(s1.ci_rel_halfwidth));
}

TEST_CASE("summarize rejects what it cannot summarize", "[timing][statistics]") {
  const std::vector<double> none;
  CHECK_THROWS_AS(summarize(none), std::invalid_argument);
  try {
    summarize(none);
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("zero samples") != std::string::npos);
  }
  const std::vector<double> with_nan{1.0, std::numeric_limits<double>::quiet_NaN()};
  CHECK_THROWS_AS(summarize(with_nan), std::invalid_argument);
  const std::vector<double> fine{1.0, 2.0};
  CHECK_THROWS_AS(summarize(fine, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(summarize(fine, 0.0), std::invalid_argument);
}

TEST_CASE("quantile_sorted interpolates linearly at the ends and between ranks", "[timing][statistics]") {
  const std::vector<double> sorted{10.0, 20.0, 30.0, 40.0};
  CHECK(quantile_sorted(sorted, 0.0) == 10.0);
  CHECK(quantile_sorted(sorted, 1.0) == 40.0);
  CHECK(quantile_sorted(sorted, 0.5) == Approx(25.0));
  CHECK(quantile_sorted(sorted, 0.1) == Approx(13.0));
  CHECK_THROWS_AS(quantile_sorted(sorted, 1.5), std::invalid_argument);
}

// Expected ranks: Python, exact binomial with math.comb (largest j with 2 P(B <= j - 1) <= 1 - confidence).
TEST_CASE("median_ci_ranks matches the exact binomial table", "[timing][statistics]") {
  struct row {
    std::size_t n;
    double confidence;
    std::size_t low_rank; // 1-based, as in the tables
    double coverage;
  };
  const std::vector<row> table{
      {6, 0.95, 1, 0.96875},       {10, 0.95, 2, 0.978515625}, {20, 0.95, 6, 0.958611},
      {50, 0.95, 18, 0.967161},    {100, 0.95, 40, 0.9648},    {500, 0.95, 228, 0.955937},
      {1000, 0.95, 469, 0.953709}, {20, 0.90, 6, 0.958611},    {100, 0.90, 42, 0.911374},
      {20, 0.99, 4, 0.997423},     {100, 0.99, 37, 0.993363},
  };
  for (const auto& r : table) {
    INFO("n = " << r.n << ", confidence = " << r.confidence);
    const auto ranks = median_ci_ranks(r.n, r.confidence);
    CHECK(ranks.reached);
    CHECK(ranks.low + 1 == r.low_rank);
    CHECK(ranks.high == r.n - r.low_rank);
    CHECK(ranks.coverage == Approx(r.coverage).epsilon(1e-5));
  }
  CHECK_FALSE(median_ci_ranks(5, 0.95).reached);
  CHECK_THROWS_AS(median_ci_ranks(0, 0.95), std::invalid_argument);
}

// Above n = 1000 the normal approximation takes over; it may be one rank more conservative, never less.
TEST_CASE("median_ci_ranks: the normal approximation agrees with the exact ranks", "[timing][statistics]") {
  // Exact 1-based lower ranks and coverages from Python for n = 1001, 2000 and 10000.
  CHECK(median_ci_ranks(1001, 0.95).low + 1 == 469); // exact: 470 (coverage 0.950015)
  CHECK(median_ci_ranks(1001, 0.95).coverage >= 0.95);
  CHECK(median_ci_ranks(2000, 0.95).low + 1 == 956);
  CHECK(median_ci_ranks(2000, 0.95).coverage == Approx(0.953447).epsilon(1e-4));
  CHECK(median_ci_ranks(10000, 0.95).low + 1 == 4902);
  CHECK(median_ci_ranks(10000, 0.95).coverage == Approx(0.951167).epsilon(1e-4));
}
