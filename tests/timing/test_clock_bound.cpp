// The judge's clock bounds what a timer in the candidate's process claims (timing/clock_bound.hpp).
#include "tests/support/catch_compat.hpp"
#include "timing/clock_bound.hpp"

using kj::timing::check_against_wall;
using kj::timing::round_clock;

TEST_CASE("a timer whose samples account for the round's wall clock is credited") {
  // 100 calls of 2 ms each, 1 ms of drawing and flushing around each, on both sides.
  const round_clock reference{300, 200, 0, 100};
  const round_clock candidate{310, 195, 5, 100};
  const auto c = check_against_wall(candidate, reference, 1.95, 0);
  CHECK(c.credited);
  CHECK(c.unaccounted_ms < c.allowance_ms);
}

TEST_CASE("a timer that reports a fraction of what the calls took is not credited") {
  // The calls took 2 ms each (as the wall clock shows), the patched timer says 0.01 ms.
  const round_clock reference{300, 200, 0, 100};
  const round_clock candidate{305, 1, 0.05, 100};
  const auto c = check_against_wall(candidate, reference, 0.01, 0);
  CHECK_FALSE(c.credited);
  CHECK(c.unaccounted_ms > 1.5);
  CHECK(c.reason.find("under-reported") != std::string::npos);
}

TEST_CASE("kj's own snapshot copies in the candidate's round are not counted against it") {
  const round_clock reference{300, 200, 0, 100};
  const round_clock candidate{700, 100, 0, 100}; // 400 ms more, all of it copies of large outputs
  CHECK_FALSE(check_against_wall(candidate, reference, 1.0, 0).credited);
  CHECK(check_against_wall(candidate, reference, 1.0, 400).credited);
}

TEST_CASE("noise of a quarter of the wall clock per call is tolerated on tiny kernels") {
  // 0.02 ms kernels with 1 ms of overhead per call: 0.3 ms of jitter per call is noise, not a hidden kernel.
  const round_clock reference{1020, 20, 0, 1000};
  const round_clock candidate{1320, 20, 0, 1000};
  CHECK(check_against_wall(candidate, reference, 0.02, 0).credited);
}

TEST_CASE("kj's input draw slower in the candidate's process than in the judge is charged beyond noise") {
  using kj::timing::check_draws;
  CHECK(check_draws(1.16, 1.09).credited); // the same draw, noise (measured on 2 busy cores)
  CHECK(check_draws(0.10, 0.05).credited); // tiny draws: the absolute allowance
  CHECK(check_draws(1.16, 1.09).charge_ms == 0);
  const auto c = check_draws(1.40, 1.02); // a 256x512x256 product computed while kj drew (measured)
  CHECK_FALSE(c.credited);
  CHECK(c.charge_ms == Approx(1.40 - 1.02 - (0.2 * 1.02 + 0.05)));
  CHECK(c.reason.find("charged to the candidate") != std::string::npos);
  CHECK(check_draws(0, 0).credited); // nothing drawn (one fixed input set)
  // A busy machine (eight compiles beside an H200): the judge's own draws spread, and so may the runner's.
  CHECK(check_draws(0.713, 0.350, 0.40).credited);
  CHECK_FALSE(check_draws(1.40, 1.02, 0.02).credited); // a quiet machine's spread does not hide a product
  // The gate's suite on an H200 (2026-11-28, be3dce8): an honest tiled matmul judged first while 24
  // candidates compiled 8 at a time; its fastest draw in the runner 0.673 ms, in the judge 0.483 ms. Charged
  // a few hundredths of a millisecond a call, where refusing the timing took its whole speedup.
  const auto loaded = check_draws(0.673, 0.483, 0.01);
  CHECK_FALSE(loaded.credited);
  CHECK(loaded.charge_ms > 0);
  CHECK(loaded.charge_ms < 0.05);
}

TEST_CASE("an honest softmax on an H100 is credited, the same calls under a 20x event hook are not") {
  // Measured (kb-honest, L1 23 online softmax, H100, 2026-11-28): 8.72 ms median, the round's time outside
  // the samples 12.2 ms a call above the reference's. An event hook that reports 5% of each call hides 95% of
  // it.
  const round_clock reference{400, 300, 10, 20};
  const round_clock honest{20 * 8.72 + 10 + 20 * (4.5 + 12.2), 20 * 8.72, 10, 20}; // 4.5: the reference's
  CHECK(check_against_wall(honest, reference, 8.72, 0).credited);
  const round_clock hooked{honest.wall_ms, 20 * 8.72 * 0.05, 10 * 0.05, 20};
  CHECK_FALSE(check_against_wall(hooked, reference, 8.72 * 0.05, 0).credited);
}

TEST_CASE("a round slowed by a loaded host is charged its excess, not refused") {
  // The gate's suite on an H200 (2026-11-28): an honest L1 3 candidate judged while compiles ran; the judge's
  // clock saw 0.759 ms a call beyond the timer against a 0.704 ms allowance (2 x its 0.352 ms median).
  const round_clock reference{100, 50, 0, 100};            // 0.5 ms of overhead a call
  const round_clock candidate{35.2 + 125.9, 35.2, 0, 100}; // 1.259 ms of overhead a call: 0.759 more
  const auto c = check_against_wall(candidate, reference, 0.352, 0);
  CHECK(c.unaccounted_ms == Approx(0.759));
  CHECK(c.allowance_ms == Approx(0.704));
  CHECK(c.credited);
  CHECK(c.charge_ms == Approx(0.055).margin(1e-6));
  CHECK(c.reason.find("charged to the candidate") != std::string::npos);
  // The same overhead beside a 0.02 ms median: the timer missed more than it reported.
  const auto lied = check_against_wall({2.0 + 125.9, 2.0, 0, 100}, reference, 0.02, 0);
  CHECK_FALSE(lied.credited);
  CHECK(lied.reason.find("under-reported") != std::string::npos);
}
