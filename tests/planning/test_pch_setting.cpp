// KJ_PCH_MIN_BUILDS: how many CPU builds a run needs before it makes kj's precompiled torch/extension.h.
#include "planning/orchestrator/evaluation_task.hpp"
#include "tests/support/catch_compat.hpp"

using kj::orchestrator::pch_min_builds;

TEST_CASE("KJ_PCH_MIN_BUILDS: unset is 6 builds, a whole number is taken, anything else keeps 6") {
  CHECK(pch_min_builds("") == 6);
  CHECK(pch_min_builds("1") == 1);
  CHECK(pch_min_builds("12") == 12);
  for (const char* bad : {"0", "-1", " 3", "3 ", "three", "2.5", "99999999999999999999999"})
    CHECK(pch_min_builds(bad) == 6);
}
