// kj's file lock (exclusive between holders; Ctrl-C ends a wait for it: it once waited on, deaf) and the
// precompiled header that waits on one.
#include "engine/exec/file_lock.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/precompiled_header.hpp"
#include "engine/exec/process.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <memory>
#include <thread>

using namespace kj::exec;

TEST_CASE("Ctrl-C ends a wait for a lock another holder keeps") {
  kj::test::scratch_dir dir;
  const auto file = dir / "lock";
  const file_lock held(file); // another open file description: a second lock on it waits
  const auto start = std::chrono::steady_clock::now();
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    request_interrupt(); // what the SIGINT handler does, whichever thread it reached
  });
  CHECK_THROWS_AS(file_lock(file), lock_interrupted);
  ctrl_c.join();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("a lock is had once its holder lets it go") {
  kj::test::scratch_dir dir;
  const auto file = dir / "lock";
  auto first = std::make_unique<file_lock>(file);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    first.reset();
  });
  const file_lock second(file); // waits until the first is released
  later.join();
  CHECK(first == nullptr);
}

TEST_CASE("the precompiled header answers why not, never throws, and says how to try a refused one again") {
  kj::test::scratch_dir dir;
  const job_runner runner{dir / "cache"};
  // a root kj cannot make: the reason, not an exception that would end the run
  kj::test::write_file(dir / "file", "not a folder");
  const precompiled_header blocked(dir / "file" / "pch", "stack");
  CHECK(blocked.make(runner).find("cannot make") != std::string::npos);
  // a failure remembered from the compiler's answer is named with how to try again
  const precompiled_header refused(dir / "pch", "stack");
  kj::test::write_file(refused.folder() / "failed", "gcc took none");
  CHECK(refused.make(runner).find("remove that file to try again") != std::string::npos);
}
