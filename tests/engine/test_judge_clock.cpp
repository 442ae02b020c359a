// The judge's clock: waits for the candidate's process are charged to its limit, everything else is kj's own
// (issue 46: kj's strict checks of a NaN output, 48.9 s, ended an instant candidate as `timeout`).
#include "engine/worker/judge_clock.hpp"
#include "tests/support/catch_compat.hpp"

#include <thread>

using kj::worker::judge_clock;
using namespace std::chrono_literals;

TEST_CASE("the judge's clock charges only the waits for the candidate, and reports both") {
  judge_clock clock(1000ms, nullptr);
  std::this_thread::sleep_for(150ms); // kj's own work
  {
    const judge_clock::wait uncharged(clock, false); // the runner's start: kj's code only
    std::this_thread::sleep_for(100ms);
  }
  CHECK(clock.candidate_s() == 0);
  CHECK(clock.candidate_left() == 1000ms);
  {
    const judge_clock::wait charged(clock, true);
    std::this_thread::sleep_for(300ms);
    CHECK(clock.report()["waiting"] == true);
    CHECK(clock.candidate_s() >= 0.3); // a wait in progress counts
  }
  CHECK(clock.report()["waiting"] == false);
  CHECK(clock.candidate_s() >= 0.3);
  CHECK(clock.candidate_left() <= 700ms);
  CHECK(clock.own_s() >= 0.25); // the 150 ms of its own and the uncharged 100 ms
  const auto report = clock.report();
  CHECK(report["type"] == "clock");
  CHECK(report["candidate_s"].get<double>() + report["own_s"].get<double>() >= 0.55);
  {
    const judge_clock::wait charged(clock, true);
    std::this_thread::sleep_for(800ms);
  }
  CHECK(clock.candidate_left() == 0ms); // spent: never negative
}

TEST_CASE("kj's own work inside a charged wait is given back, never more than was charged") {
  judge_clock clock(1000ms, nullptr);
  {
    const judge_clock::wait charged(clock,
                                    true); // a timed call's prepare: kj's draw in the candidate's process
    std::this_thread::sleep_for(200ms);
  }
  const double before = clock.candidate_s();
  clock.refund(150);
  CHECK(clock.candidate_s() == Approx(before - 0.15).margin(1e-6));
  CHECK(clock.own_s() >= 0.15); // the draw's time is kj's now
  clock.refund(10'000);         // a refund past what was charged stops at zero
  CHECK(clock.candidate_s() == 0);
  CHECK(clock.candidate_left() == 1000ms);
  clock.refund(-5); // nothing to give back
  CHECK(clock.candidate_s() == 0);
}
