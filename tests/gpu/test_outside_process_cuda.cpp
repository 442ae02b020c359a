// The outside-process corpus's attacks on timing (classes 4-6 of the trust issue: a forged reply, predicted
// inputs, a precision kept only while watched) on the GPU at full size, beside the honest bystander judged
// after them: the same files and checks as the CPU part (tests/acceptance/test_outside_process.cpp).
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

TEST_CASE("the outside-process CUDA attacks on timing gain nothing beside an honest bystander") {
  const auto r = kj::test::hostile::run_and_check(
      "cuda", kj::test::fixtures_dir() / "outside_process",
      {"cpu/level_1_problem_1_sample_43_kernel.py", "cpu/level_1_problem_1_sample_44_kernel.py",
       "cpu/level_1_problem_1_sample_45_kernel.py", "cpu/level_3_problem_1_sample_49_kernel.py"});
  if (kj::test::no_cuda_device(r)) kj::test::skip_test("torch in kj's Python sees no CUDA device");
}
