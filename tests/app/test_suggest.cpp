// Did-you-mean: the nearest command or option to a mistyped one.
#include "app/cli/suggest.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;

TEST_CASE("a mistyped command or option gets the nearest one") {
  CHECK(cli::nearest("rn", {"run", "runs", "results", "report"}) == "run");
  CHECK(cli::nearest("reslts", {"run", "results", "report"}) == "results");
  CHECK(cli::nearest("--candidate", {"--candidates", "--cache-dir"}) == "--candidates");
  CHECK_FALSE(cli::nearest("frobnicate", {"run", "results"}));
}
