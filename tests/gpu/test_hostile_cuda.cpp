// The hostile corpus's CUDA attacks (tests/fixtures/hostile/cuda) beside honest bystanders, on the GPU: the
// same checks as the CPU run in tests/acceptance (tests/acceptance/hostile_run.cpp).
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

TEST_CASE(
    "kj run --device cuda over the CUDA attacks gives every expected verdict and keeps the judge whole") {
  if (kj::test::no_cuda_device(kj::test::hostile::run_and_check("cuda")))
    kj::test::skip_test("torch in kj's Python sees no CUDA device");
}
