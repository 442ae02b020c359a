// The timed-window corpus (tests/fixtures/window) on the GPU at full size: the candidates whose attack does
// not depend on the device (modes and finalizers; the gate affords five evaluations) beside
// its honest bystander, against the same manifest as on the CPU (tests/acceptance/test_window_corpus.cpp).
// Left out: the two that register a CPU kernel with torch.library (aten::clone, aten::rand), inert on CUDA.
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

TEST_CASE("the window corpus's CUDA attacks move no work out of the timed window") {
  std::vector<std::string> files;
  for (int sample : {0, 1, 2, 4, 7})
    files.push_back("cpu/level_1_problem_1_sample_" + std::to_string(sample) + "_kernel.py");
  const auto r = kj::test::hostile::run_and_check("cuda", kj::test::fixtures_dir() / "window", files);
  if (kj::test::no_cuda_device(r)) kj::test::skip_test("torch in kj's Python sees no CUDA device");
}
