// The acceptance run on the CPU: the built-in suite judges every CPU example candidate as it expects.
#include "tests/support/catch_compat.hpp"
#include "tests/support/suite_check.hpp"

TEST_CASE("kj run on the built-in suite gives every CPU example its expected verdict") {
  kj::test::check_builtin_suite("cpu");
}
