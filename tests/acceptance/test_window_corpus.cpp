// The timed-window corpus (tests/fixtures/window): candidates that try to do no work inside kj's timed window
// (work deferred into the export of their output or the release of their inputs, work done where they know
// the checked calls, work done while kj draws the next inputs), beside an honest bystander, against the real
// `kj` on the CPU. What must hold is the corpus's manifest: no credited speedup for any of them, the
// bystander correct and credited.
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"

TEST_CASE("no work escapes the timed window: deferred and pick-reading candidates get no credited speedup") {
  kj::test::hostile::run_and_check("cpu", kj::test::fixtures_dir() / "window");
}
