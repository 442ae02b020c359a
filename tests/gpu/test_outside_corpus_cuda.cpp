// The outside hack corpus's CUDA candidates (tests/fixtures/outside/cuda: side stream, replayed CUDA graph,
// patched and untimed events, stale caching-allocator memory) beside an honest bystander, on the GPU: the
// same checks as the CPU part (tests/acceptance/test_outside_corpus.cpp).
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

TEST_CASE(
    "kj run --device cuda over the outside corpus's CUDA hacks records what each source's hack must get") {
  if (kj::test::no_cuda_device(
          kj::test::hostile::run_and_check("cuda", kj::test::fixtures_dir() / "outside")))
    kj::test::skip_test("torch in kj's Python sees no CUDA device");
}
