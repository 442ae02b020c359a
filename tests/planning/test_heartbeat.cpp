// The heartbeat's status line: what compiles and what is judged, and for how long.
#include "planning/results/heartbeat.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;

TEST_CASE("the heartbeat says what compiles and what is judged, and for how long") {
  results::heartbeat beat(results::progress_mode::none);
  CHECK(beat.line().empty());
  beat.expect_builds(3);
  beat.started(true, "L1 2_GELU mA s0", "");
  beat.started(true, "L1 3_Sum mA s0", "");
  beat.finished(true, "L1 3_Sum mA s0", "");
  CHECK(beat.line() == "compiling: 1 of 3 done; running L1 2_GELU mA s0 (0:00)");
  beat.finished(true, "L1 2_GELU mA s0", "");
  beat.started(false, "L1 2_GELU mA s0", "cpu");
  CHECK(beat.line() == "judging L1 2_GELU mA s0 on cpu: 0:00 so far");
}
