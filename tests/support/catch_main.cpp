// The tests' own Catch2 main: one place to set up the environment before any test runs.
#if defined(KJ_CATCH2_V3)
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdlib>

int main(int argc, char* argv[]) {
  // Workers started by tests must not pick up a user's GPU selection or a stray DB path.
  ::setenv("KJ_TESTING", "1", 1);
  return Catch::Session().run(argc, argv);
}
