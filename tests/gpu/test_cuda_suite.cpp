// GPU acceptance (label `gpu`): the built-in suite with its CUDA example candidates on the visible GPU.
#include "tests/support/catch_compat.hpp"
#include "tests/support/suite_check.hpp"

TEST_CASE("kj run --device cuda on the built-in suite gives every CUDA example its expected verdict") {
  kj::test::check_builtin_suite("cuda");
}
