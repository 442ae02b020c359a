// The strict-verification corpus: every deliberately bad candidate gets the verdicts and failing classes its
// header promises, and every honest one passes both verdicts (tests/fixtures/strict/README.md lists them).
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"

using namespace kj::test;

TEST_CASE("the strict corpus: bad candidates fail the classes they target, honest ones pass everything") {
  const auto root = fixtures_dir() / "strict";
  scratch_dir dir;
  const auto r = run_corpus(root, {"--device", "cpu", "--no-timing", "--timeout", "120"}, dir);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto counts = check_corpus_results(root, dir / "kj.sqlite", "cpu");
  CHECK(counts.bad >= 25);
  CHECK(counts.honest >= 10);
}
