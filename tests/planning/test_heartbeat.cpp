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

TEST_CASE("the candidates' builds are counted from zero after the baselines' on the same scheduler") {
  results::heartbeat beat(results::progress_mode::none);
  for (const char* baseline : {"L1 1 compile-default", "L1 2 compile-default", "L1 3 compile-default"}) {
    beat.started(true, baseline, "");
    beat.finished(true, baseline, "");
  }
  beat.started(true, "L1 4 compile-default", "");
  CHECK(beat.line() == "compiling: 3 done; running L1 4 compile-default (0:00)"); // no plan announced
  beat.finished(true, "L1 4 compile-default", "");
  beat.expect_builds(2);
  beat.started(true, "L1 2_GELU mA s0", "");
  CHECK(beat.line() == "compiling: 0 of 2 done; running L1 2_GELU mA s0 (0:00)");
  beat.finished(true, "L1 2_GELU mA s0", "");
  beat.started(true, "L1 2_GELU mA s0", ""); // rebuilt after its cached build failed to load
  beat.started(true, "L1 3_Sum mA s0", "");
  beat.finished(true, "L1 3_Sum mA s0", "");
  beat.finished(true, "L1 2_GELU mA s0", "");
  beat.started(true, "L1 5 extra", "");
  CHECK(beat.line() == "compiling: 3 done; running L1 5 extra (0:00)");
}
