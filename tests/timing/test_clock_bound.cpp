// The judge's clock bounds what a timer in the candidate's process claims (timing/clock_bound.hpp).
#include "tests/support/catch_compat.hpp"
#include "timing/clock_bound.hpp"

#include <vector>

using kj::timing::bound_of_handshake;
using kj::timing::charge_call;
using kj::timing::check_calls;

TEST_CASE("the handshake's allowance covers the noise its calibration showed") {
  // Overheads of empty calls while only kj's code ran in the runner (2 busy cores: ~40 us, a few slow ones).
  const std::vector<double> overheads{0.041, 0.038, 0.044, 0.040, 0.039, 0.052, 0.043, 0.040,
                                      0.047, 0.039, 0.041, 0.090, 0.042, 0.040, 0.045, 0.038};
  const auto b = bound_of_handshake(overheads);
  CHECK(b.calibrated);
  CHECK(b.floor_ms == Approx(0.038));
  CHECK(b.median_ms == Approx(0.041).margin(0.002));
  CHECK(b.allowance_ms == Approx(2 * b.median_ms + 0.02));
  for (double o : overheads)
    if (o < 0.06) CHECK(o < b.allowance_ms);
  // Two handshakes delayed 0.7 ms while kj started (measured on 2 cores): the median holds the bound tight.
  std::vector<double> delayed(overheads);
  delayed[3] = delayed[9] = 0.7;
  CHECK(bound_of_handshake(delayed).allowance_ms < 0.11);
  CHECK(b.max_gain_ms() == Approx(b.allowance_ms - 0.038));
  const auto none = bound_of_handshake({});
  CHECK_FALSE(none.calibrated);
  CHECK(none.allowance_ms == Approx(0.2));
  CHECK(bound_of_handshake({-1.0, 1e9}).calibrated == false); // nonsense is no calibration
}

TEST_CASE("a sample below the judge's bracket less the allowance is charged up to it") {
  const auto b = bound_of_handshake({0.02, 0.02, 0.02, 0.02}); // allowance 0.06 ms
  CHECK(b.allowance_ms == Approx(0.06));
  const auto honest = charge_call(1.00, 1.03, b); // 30 us of handshake: nothing charged
  CHECK(honest.credited_ms == Approx(1.00));
  CHECK(honest.charge_ms == 0);
  const auto forged = charge_call(0.20, 1.03, b); // the reply claims a fifth of the call
  CHECK(forged.credited_ms == Approx(1.03 - 0.06));
  CHECK(forged.charge_ms == Approx(0.77));
  // What a forger can still gain: the allowance less the true overhead, here 30 us a call.
  const auto shaved = charge_call(1.03 - 0.06, 1.03, b);
  CHECK(shaved.charge_ms == 0);
  CHECK(1.00 - shaved.credited_ms == Approx(0.03));
}

TEST_CASE("charges on most calls mark a timing doubtful, a host that delays some handshakes does not") {
  const auto b = bound_of_handshake({0.02, 0.02, 0.02, 0.02});
  std::vector<double> raw(40, 0.2), charges(40, 0.77);
  const auto forged = check_calls(raw, charges, b);
  CHECK(forged.systematic); // a forging timer, or a host that delayed every handshake: doubtful, not refused
  CHECK(forged.charged == 40);
  CHECK(forged.reason.find("under-reported, or the host delayed") != std::string::npos);
  CHECK(forged.reason.find("charged time is what is credited") != std::string::npos);
  std::vector<double> noisy(40, 0.0);
  for (std::size_t i = 0; i < noisy.size(); i += 3)
    noisy[i] = 0.5; // every third handshake delayed half a millisecond (a busy host)
  const auto busy = check_calls(std::vector<double>(40, 1.0), noisy, b);
  CHECK_FALSE(busy.systematic);
  CHECK(busy.charged == 14);
  CHECK(busy.total_charge_ms == Approx(7.0));
  // Every call charged a little (a loaded host throughout): charged, not doubtful.
  CHECK_FALSE(check_calls(std::vector<double>(40, 1.0), std::vector<double>(40, 0.03), b).systematic);
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
