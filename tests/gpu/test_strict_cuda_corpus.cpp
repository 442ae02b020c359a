// GPU acceptance (label `gpu`): the CUDA strict-verification corpus (tests/fixtures/strict_cuda/README.md)
// through the real `kj run --device cuda`, timing on so that the kernel trace's `side_stream` class exists.
// Skipped when torch in kj's Python sees no CUDA device.
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

using namespace kj::test;

TEST_CASE("the CUDA strict corpus: bad candidates fail the classes they target, honest ones pass everything",
          "[gpu][cuda]") {
  const auto root = fixtures_dir() / "strict_cuda";
  scratch_dir dir;
  const auto r = run_corpus(
      root, {"--device", "cuda", "--min-samples", "5", "--max-time-ms", "200", "--timeout", "300"}, dir);
  if (no_cuda_device(r)) {
    skip_test("torch in kj's Python sees no CUDA device");
    return;
  }
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto counts = check_corpus_results(root, dir / "kj.sqlite", "cuda");
  CHECK(counts.bad >= 6);
  CHECK(counts.honest >= 4);
}
