// Tests the adaptive stopping rule on synthetic samples: convergence, both caps, and the minimums.
#include "tests/support/catch_compat.hpp"
#include "timing/statistics.hpp"
#include "timing/stopping_rule.hpp"

#include <algorithm>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>

using kj::timing::stopping_params;
using kj::timing::stopping_rule;
using kj::timing::summarize;

namespace {

// Feeds samples from `draw` until the rule is done or `limit` samples were offered.
template <typename draw_fn>
void feed(stopping_rule& rule, draw_fn draw, std::size_t limit = 1'000'000) {
  for (std::size_t i = 0; i < limit && !rule.done(); ++i)
    rule.add(draw());
}

} // namespace

TEST_CASE("stopping rule converges on low-noise samples", "[timing][stopping]") {
  std::mt19937 rng(1);
  std::normal_distribution<double> noise(1.0, 0.001); // 1 ms with 0.1% noise
  stopping_rule rule;
  feed(rule, [&] { return noise(rng); });
  REQUIRE(rule.done());
  CHECK(rule.reason() == "converged");
  CHECK(rule.samples().size() >= rule.params().min_samples);
  CHECK(rule.total_ms() >= rule.params().min_time_ms);
  CHECK(rule.total_ms() < 1.1 * rule.params().min_time_ms); // min_time, not precision, was the binding limit
  const auto s = summarize(rule.samples(), rule.params().confidence);
  CHECK(s.ci_rel_halfwidth <= rule.params().target_rel_ci);
  CHECK(rule.last_rel_ci() == Approx(s.ci_rel_halfwidth));
}

TEST_CASE("stopping rule never converges before min_samples or min_time", "[timing][stopping]") {
  SECTION("identical samples: the interval is a point from the first check on") {
    stopping_params params;
    params.min_samples = 25;
    params.min_time_ms = 0;
    stopping_rule rule(params);
    for (int i = 0; i < 24; ++i) {
      rule.add(5.0);
      CHECK_FALSE(rule.done());
    }
    rule.add(5.0);
    CHECK(rule.reason() == "converged");
    CHECK(rule.samples().size() == 25);
  }
  SECTION("min_samples below what the confidence level needs (6 at 95%)") {
    stopping_params params;
    params.min_samples = 1;
    params.min_time_ms = 0;
    stopping_rule rule(params);
    feed(rule, [] { return 1.0; });
    CHECK(rule.reason() == "converged");
    CHECK(rule.samples().size() == 6);
  }
  SECTION("min_time_ms binds after min_samples") {
    stopping_rule rule; // 100 ms of samples needed
    feed(rule, [] { return 2.0; });
    CHECK(rule.reason() == "converged");
    CHECK(rule.samples().size() == 50);
  }
}

TEST_CASE("stopping rule hits the time cap on noisy samples", "[timing][stopping]") {
  std::mt19937 rng(2);
  std::lognormal_distribution<double> noisy(0.0, 1.0); // median 1 ms, a spread no 0.5% CI survives
  stopping_rule rule;
  feed(rule, [&] { return noisy(rng); });
  CHECK(rule.reason() == "time_cap");
  CHECK(rule.total_ms() >= rule.params().max_time_ms);
  CHECK(rule.samples().size() < rule.params().max_samples);
  CHECK(rule.last_rel_ci() > rule.params().target_rel_ci);
}

TEST_CASE("stopping rule hits the sample cap on noisy samples", "[timing][stopping]") {
  std::mt19937 rng(3);
  std::lognormal_distribution<double> noisy(-3.0, 1.0); // tiny samples: the time cap is far away
  stopping_params params;
  params.max_samples = 500;
  stopping_rule rule(params);
  feed(rule, [&] { return noisy(rng); });
  CHECK(rule.reason() == "sample_cap");
  CHECK(rule.samples().size() == 500);
}

TEST_CASE("stopping rule: the caps are hard, even before min_samples", "[timing][stopping]") {
  stopping_rule rule; // a 3 s sample: the 5 s cap comes at the second one
  rule.add(3000.0);
  CHECK_FALSE(rule.done());
  CHECK(rule.reason().empty());
  rule.add(3000.0);
  CHECK(rule.reason() == "time_cap");
  CHECK_THROWS_AS(rule.add(1.0), std::logic_error);
}

TEST_CASE("stopping rule stops no earlier than the first converged sample count", "[timing][stopping]") {
  // Moderate noise: convergence takes a few thousand samples, well into the geometric check schedule.
  std::mt19937 rng(4);
  std::normal_distribution<double> noise(0.05, 0.004);
  stopping_params params;
  params.min_time_ms = 0;
  stopping_rule rule(params);
  feed(rule, [&] { return std::max(0.0, noise(rng)); });
  REQUIRE(rule.reason() == "converged");
  const auto& samples = rule.samples();
  CHECK(samples.size() > 1000);
  std::size_t first = 0; // the first n at which a check after every sample would have stopped
  for (std::size_t n = params.min_samples; n <= samples.size() && first == 0; ++n) {
    const std::span<const double> prefix(samples.data(), n);
    if (summarize(prefix, params.confidence).ci_rel_halfwidth <= params.target_rel_ci) first = n;
  }
  CHECK(first > 0);
  CHECK(samples.size() >= first);
  CHECK(samples.size() <= first + first / 8 + 1); // the schedule's overshoot is about n/16
}

TEST_CASE("stopping rule rejects bad parameters and samples", "[timing][stopping]") {
  stopping_params bad;
  bad.confidence = 1.0;
  CHECK_THROWS_AS(stopping_rule(bad), std::invalid_argument);
  bad = {};
  bad.min_samples = 20;
  bad.max_samples = 10;
  CHECK_THROWS_AS(stopping_rule(bad), std::invalid_argument);
  bad = {};
  bad.min_time_ms = 6000;
  CHECK_THROWS_AS(stopping_rule(bad), std::invalid_argument);
  stopping_rule rule;
  CHECK_THROWS_AS(rule.add(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(rule.add(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK(rule.samples().empty());
}
