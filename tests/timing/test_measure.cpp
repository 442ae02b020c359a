// Tests the cold measurement loop's steps with a scripted subject: call order, warmup, trials, summary.
#include "tests/support/catch_compat.hpp"
#include "timing/measure.hpp"

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using kj::timing::measure_cold;
using kj::timing::measure_params;
using kj::timing::timed_subject;

namespace {

// Records every call as one letter (f = flush, s = start, c = call, t = stop) and returns scripted samples:
// `warm_ms` for the first `warm_count` samples, `steady_ms` afterwards.
class fake_subject final : public timed_subject {
public:
  fake_subject(double steady_ms, std::size_t warm_count = 0, double warm_ms = 0)
      : m_steady_ms(steady_ms), m_warm_count(warm_count), m_warm_ms(warm_ms) {}

  void flush() override {
    m_log += 'f';
    if (m_flush_sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(m_flush_sleep_ms));
  }
  void start() override { m_log += 's'; }
  void call() override {
    m_log += 'c';
    if (m_throw_at != 0 && m_stops + 1 == m_throw_at) throw std::runtime_error("kernel failed");
  }
  double stop_ms() override {
    m_log += 't';
    ++m_stops;
    return m_stops <= m_warm_count ? m_warm_ms : m_steady_ms;
  }

  const std::string& log() const { return m_log; }
  void throw_at(std::size_t sample) { m_throw_at = sample; }
  void flush_sleeps(int ms) { m_flush_sleep_ms = ms; }

private:
  double m_steady_ms;
  std::size_t m_warm_count;
  double m_warm_ms;
  std::size_t m_stops = 0;
  std::size_t m_throw_at = 0;
  int m_flush_sleep_ms = 0;
  std::string m_log;
};

std::string repeat(const std::string& unit, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i)
    out += unit;
  return out;
}

} // namespace

TEST_CASE("measure_cold flushes before every start, outside the timed window", "[timing][measure]") {
  fake_subject subject(10.0);
  const auto m = measure_cold(subject);
  const std::size_t samples_taken = m.warmup_calls + m.samples_ms.size();
  CHECK(subject.log() == repeat("fsct", samples_taken));
}

TEST_CASE("measure_cold warms up by count and by sample time", "[timing][measure]") {
  SECTION("10 ms samples: three calls meet both 3 calls and 25 ms") {
    fake_subject subject(10.0);
    const auto m = measure_cold(subject);
    CHECK(m.warmup_calls == 3);
    CHECK(m.warmup_ms == Approx(30.0));
  }
  SECTION("1 ms samples: 25 calls to reach 25 ms") {
    fake_subject subject(1.0);
    const auto m = measure_cold(subject);
    CHECK(m.warmup_calls == 25);
    CHECK(m.warmup_ms == Approx(25.0));
  }
  SECTION("slow samples: the call count binds") {
    fake_subject subject(200.0);
    measure_params params;
    params.warmup_min_calls = 5;
    const auto m = measure_cold(subject, params);
    CHECK(m.warmup_calls == 5);
  }
  SECTION("tiny samples: warmup_max_calls bounds the warmup") {
    fake_subject subject(0.001);
    measure_params params;
    params.warmup_max_calls = 40;
    params.stopping.min_time_ms = 0;
    const auto m = measure_cold(subject, params);
    CHECK(m.warmup_calls == 40);
  }
  SECTION("tiny samples behind a 6 ms flush: 25 ms of wall clock end the warmup, not 25 ms of samples") {
    fake_subject subject(0.001);
    subject.flush_sleeps(6);
    measure_params params;
    params.stopping.min_time_ms = 0;
    params.stopping.max_samples = 10;
    params.stopping.min_samples = 10;
    const auto m = measure_cold(subject, params);
    CHECK(m.warmup_calls >= 3);
    CHECK(m.warmup_calls <= 5); // 5 flushes take 30 ms; samples alone would need 25000 calls
  }
  SECTION("no warmup at all") {
    fake_subject subject(10.0);
    measure_params params;
    params.warmup_min_calls = 0;
    params.warmup_min_ms = 0;
    const auto m = measure_cold(subject, params);
    CHECK(m.warmup_calls == 0);
    CHECK(subject.log() == repeat("fsct", m.samples_ms.size()));
  }
}

TEST_CASE("measure_cold keeps warmup samples out of the trials", "[timing][measure]") {
  fake_subject subject(2.0, 3, 50.0); // the first three samples are slow (a cold start)
  const auto m = measure_cold(subject);
  CHECK(m.warmup_calls == 3);
  CHECK(m.warmup_ms == Approx(150.0));
  REQUIRE_FALSE(m.samples_ms.empty());
  for (const double x : m.samples_ms)
    CHECK(x == 2.0);
  CHECK(m.stats.median == 2.0);
  CHECK(m.stats.max == 2.0);
}

TEST_CASE("measure_cold samples until the stopping rule is done", "[timing][measure]") {
  fake_subject subject(2.0);
  measure_params params;
  params.stopping.min_samples = 30;
  const auto m = measure_cold(subject, params);
  CHECK(m.stop_reason == "converged");
  CHECK(m.samples_ms.size() == 50); // 100 ms of 2 ms samples
  CHECK(m.stats.n == m.samples_ms.size());
  CHECK(m.params.min_samples == 30);

  fake_subject slow(1000.0);
  const auto capped = measure_cold(slow);
  CHECK(capped.stop_reason == "time_cap");
  CHECK(capped.samples_ms.size() == 5);
}

TEST_CASE("measure_cold stops at the wall-clock timeout", "[timing][measure]") {
  fake_subject subject(1.0);
  measure_params params;
  params.max_wall_ms = 0; // expires after the first sample, whatever the clock reads
  const auto m = measure_cold(subject, params);
  CHECK(m.stop_reason == "wall_timeout");
  CHECK(m.samples_ms.size() == 1);
  CHECK(m.stats.n == 1);
}

TEST_CASE("measure_cold lets the subject's errors through and rejects bad parameters", "[timing][measure]") {
  fake_subject failing(1.0);
  failing.throw_at(30); // after the warmup, during the trials
  CHECK_THROWS_AS(measure_cold(failing), std::runtime_error);

  fake_subject subject(1.0);
  measure_params params;
  params.warmup_min_calls = 10;
  params.warmup_max_calls = 5;
  CHECK_THROWS_AS(measure_cold(subject, params), std::invalid_argument);
  params = {};
  params.stopping.confidence = 0;
  CHECK_THROWS_AS(measure_cold(subject, params), std::invalid_argument);
  CHECK(subject.log().empty());
}

TEST_CASE("cold_measurement runs once", "[timing][measure]") {
  fake_subject subject(10.0);
  kj::timing::cold_measurement run(subject, measure_params{});
  CHECK(run.run().stop_reason == "converged");
  CHECK_THROWS_AS(run.run(), std::logic_error);
}
