// The outside hack corpus (tests/fixtures/outside): one candidate per reward-hack class that public sources
// document, each naming its source, against the real `kj` on the CPU in one run beside an honest bystander.
// What must hold is the corpus's manifest, checked as the hostile corpus's is: verdicts, strict verdicts and
// classes, findings, no credited speedup, no file outside scratch, no secret, no connection, an intact DB.
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"

TEST_CASE("kj run over the outside hack corpus records what each public source's hack must get") {
  kj::test::hostile::run_and_check("cpu", kj::test::fixtures_dir() / "outside");
}
