// The report statistics against known values and against brute force: Mann–Whitney, Benjamini–Hochberg,
// the order-statistic bootstrap of the median (exact probabilities, naive resampling), interval coverage.
#include "reports/stats.hpp"
#include "tests/support/catch_compat.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

using namespace kj::reports::stats;

TEST_CASE("Mann-Whitney U with tie and continuity correction matches the textbook normal approximation") {
  const std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  const auto r = mann_whitney(a, b);
  CHECK(r.u == 0);
  CHECK(r.p == Approx(0.0121858).epsilon(1e-4)); // scipy.stats.mannwhitneyu(a, b, method="asymptotic")
  CHECK(r.z < 0);
  const auto tied =
      mann_whitney(std::vector<double>{1, 2, 2, 3, 3, 3, 4}, std::vector<double>{2, 3, 4, 4, 5, 5});
  CHECK(tied.u == 8.5);
  CHECK(tied.p == Approx(0.0782624).epsilon(1e-4));
  CHECK(mann_whitney(std::vector<double>{1, 1}, std::vector<double>{1, 1}).p == 1.0); // all tied
  CHECK(mann_whitney(std::vector<double>{}, b).p == 1.0);
}

TEST_CASE("Benjamini-Hochberg adjusted p-values match R's p.adjust(method = 'BH')") {
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005, 0.2};
  const auto q = benjamini_hochberg(p);
  const std::vector<double> expected{0.025, 0.05, 0.05, 0.025, 0.2};
  for (std::size_t i = 0; i < p.size(); ++i)
    CHECK(q[i] == Approx(expected[i]));
  const auto with_nan = benjamini_hochberg(std::vector<double>{0.01, std::nan(""), 0.02});
  CHECK(std::isnan(with_nan[1]));
  CHECK(with_nan[0] == Approx(0.02)); // two tests, not three
}

TEST_CASE("the order-statistic bootstrap draws the median with its exact bootstrap distribution") {
  // n odd: the resample median is x(j) with probability P(Bin(n, j/n) >= k) - P(Bin(n, (j-1)/n) >= k).
  const std::vector<double> x{3, 1, 4, 1.5, 9, 2.6, 5, 3.5, 8}; // 9 distinct values
  const int n = 9, k = 5;
  const auto tail = [&](double q) { // P(Bin(n, q) >= k)
    double s = 0;
    for (int i = k; i <= n; ++i)
      s += std::tgamma(n + 1) / std::tgamma(i + 1) / std::tgamma(n - i + 1) * std::pow(q, i) *
           std::pow(1 - q, n - i);
    return s;
  };
  std::vector<double> sorted = x;
  std::sort(sorted.begin(), sorted.end());
  const resampler medians(x, statistic::median);
  std::mt19937_64 rng(7);
  const int draws = 40000;
  std::map<double, int> seen;
  for (int i = 0; i < draws; ++i)
    ++seen[medians.draw(rng)];
  for (int j = 1; j <= n; ++j) {
    const double p = tail(static_cast<double>(j) / n) - tail(static_cast<double>(j - 1) / n);
    const double observed = static_cast<double>(seen[sorted[j - 1]]) / draws;
    INFO("rank " << j << " expected " << p << " observed " << observed);
    CHECK(std::abs(observed - p) < 4 * std::sqrt(p * (1 - p) / draws) + 1e-9);
  }
}

TEST_CASE("for an even n the drawn medians match naive resampling") {
  std::mt19937_64 gen(11);
  std::lognormal_distribution<double> noise(0, 0.3);
  std::vector<double> x(10);
  for (auto& v : x)
    v = noise(gen);
  const resampler medians(x, statistic::median);
  std::vector<double> fast, naive;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::size_t> pick(0, x.size() - 1);
  for (int i = 0; i < 40000; ++i) {
    fast.push_back(medians.draw(rng));
    std::vector<double> r(x.size());
    for (auto& v : r)
      v = x[pick(rng)];
    naive.push_back(compute(statistic::median, r));
  }
  for (double q : {0.05, 0.25, 0.5, 0.75, 0.95})
    CHECK(percentile(fast, q) == Approx(percentile(naive, q)).epsilon(0.03));
}

TEST_CASE("bootstrap intervals of a median ratio cover the true ratio about 95% of the time") {
  // Two lognormal samples of 60 whose true medians are 1 and 1.05.
  std::mt19937_64 gen(5);
  std::lognormal_distribution<double> noise(0, 0.05);
  const int repetitions = 400;
  int covered = 0;
  bootstrap_options options;
  options.replicates = 1000;
  for (int rep = 0; rep < repetitions; ++rep) {
    std::vector<double> a(60), b(60);
    for (auto& v : a)
      v = 1.05 * noise(gen);
    for (auto& v : b)
      v = noise(gen);
    options.seed = seed_for("coverage", static_cast<std::uint64_t>(rep));
    const auto ci = bootstrap_ratio(a, b, statistic::median, options);
    REQUIRE(ci.valid());
    covered += ci.low <= 1.05 && 1.05 <= ci.high;
  }
  const double coverage = static_cast<double>(covered) / repetitions;
  INFO("coverage " << coverage);
  CHECK(coverage > 0.90);
  CHECK(coverage < 0.99);
}

TEST_CASE("statistics, geomean and seeds") {
  CHECK(compute(statistic::median, std::vector<double>{3, 1, 2, 10}) == 2.5);
  CHECK(compute(statistic::mean, std::vector<double>{3, 1, 2, 10}) == 4.0);
  CHECK(geomean(std::vector<double>{2, 8}) == Approx(4.0));
  CHECK(std::isnan(geomean(std::vector<double>{2, 0})));
  CHECK(seed_for("a", 1) == seed_for("a", 1));
  CHECK(seed_for("a", 1) != seed_for("b", 1));
  CHECK_FALSE(bootstrap_ratio(std::vector<double>{}, std::vector<double>{1}, statistic::median, {}).valid());
  CHECK_THROWS_AS(parse_statistic("mode"), std::invalid_argument);
}
