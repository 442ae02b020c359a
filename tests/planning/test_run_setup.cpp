// The pieces of `kj run`'s setup: the producer label, the options a resume compares, the per-run lock.
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/run_config.hpp"
#include "planning/orchestrator/run_lock.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace kj;
using namespace kj::test;
namespace fs = std::filesystem;

TEST_CASE("a run's producer is --producer, else what its candidates are, else their folder's name") {
  scratch_dir dir;
  fs::create_directories(dir / "runs" / "claude-opus");
  write_file(dir / "runs" / "claude-opus" / "k.py", "");
  orchestrator::run_options o;
  CHECK(orchestrator::default_producer(o) == "examples");
  o.candidates = "identity";
  CHECK(orchestrator::default_producer(o) == "identity");
  o.candidates = (dir / "runs" / "claude-opus").string() + "/";
  CHECK(orchestrator::default_producer(o) == "claude-opus");
  o.candidates = (dir / "runs" / "claude-opus" / "k.py").string();
  CHECK(orchestrator::default_producer(o) == "claude-opus");
  o.producer = "opus-4.5";
  CHECK(orchestrator::default_producer(o) == "opus-4.5");
}

TEST_CASE("a resume compares the options that define the run and names each difference") {
  orchestrator::run_options o;
  o.sources.builtin = true;
  o.sources.ids = kb::id_set::parse("1-3");
  const auto before = orchestrator::run_config(o);
  CHECK(orchestrator::config_differences(before, before).empty());
  o.sources.ids = kb::id_set::parse("1-5");
  o.judging.timing.enabled = false;
  o.judging.protocol = kj::protocol_kind::cuda_agent;
  o.judging.timeout_s = 5; // operational: may change
  o.build_jobs = 1;        // operational
  const auto diff = orchestrator::config_differences(before, orchestrator::run_config(o));
  REQUIRE(diff.size() == 3);
  CHECK(diff[0] == "--ids: 1-3 in the run, 1-5 now");
  CHECK(diff[1] == "--protocol: kernelbench in the run, cuda-agent now");
  CHECK(diff[2] == "--no-timing: not given in the run, given now");
  // A config an older kj wrote (no config_version) is not compared.
  CHECK(orchestrator::config_differences(nlohmann::json{{"trials", 5}}, before).empty());
}

TEST_CASE("a resume that dropped --quick is told so, not only the timing options it set") {
  orchestrator::run_options o;
  o.sources.builtin = true;
  const auto full = orchestrator::run_config(o);
  o.judging.timing.min_samples = 5; // what --quick sets
  o.judging.timing.rounds = 1;
  const auto diff = orchestrator::config_differences(orchestrator::run_config(o), full);
  REQUIRE(diff.size() == 3);
  CHECK(diff.back().find("give --quick again if the run had it") != std::string::npos);
}

TEST_CASE("a run is locked while one process works on it, and the lock goes with the process") {
  scratch_dir dir;
  const fs::path db = dir / "kj.sqlite";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    const orchestrator::run_lock lock(db, "r1");
    (void)::write(ready[1], "x", 1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  CHECK(orchestrator::run_lock::holder(db, "r1") == child);
  CHECK_FALSE(orchestrator::run_lock::holder(db, "r2"));
  try {
    const orchestrator::run_lock second(db, "r1");
    FAIL("a second lock of r1 was granted");
  } catch (const kb::source_error& e) {
    CHECK(std::string(e.what()).find("in use by another kj (pid " + std::to_string(child) + ")") !=
          std::string::npos);
  }
  { const orchestrator::run_lock other(db, "r2"); } // another run of the DB is free
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  CHECK_FALSE(orchestrator::run_lock::holder(db, "r1"));
  const orchestrator::run_lock after(db, "r1");
  ::close(ready[0]);
  ::close(ready[1]);
}
