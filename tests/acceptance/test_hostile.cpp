// The hostile corpus (tests/fixtures/hostile, written by a helper that attacked kj from the outside) against
// the real `kj`, on the CPU: every attack that needs no compiled extension, beside honest bystanders, in one
// run. What must hold is the corpus's own manifest: verdicts, no credited speedup, no file outside scratch,
// no process left, no secret anywhere kj writes, no connection, an intact DB, and the bystanders still right.
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"

TEST_CASE(
    "kj run over hostile and honest candidates gives every expected verdict and keeps the judge whole") {
  kj::test::hostile::run_and_check("cpu");
}
