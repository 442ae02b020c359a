// kj's builds stand still while a device slot times (engine/exec/quiet_builds.hpp): every process of an
// enrolled build, a daemon that left its process group included, is stopped while a slot holds the host quiet
// and continued when the last slot lets go; the time it stood still is counted.
#include "engine/exec/process.hpp"
#include "engine/exec/quiet_builds.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <csignal>
#include <fmt/core.h>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace {

// The state letter of /proc/<pid>/stat: 'T' stopped, 'S' sleeping, 'R' running.
char state_of(int pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  const std::string text((std::istreambuf_iterator<char>(stat)), {});
  const auto close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

// Waits up to a second for `pid` to reach a state among `wanted`.
bool reaches(int pid, const std::string& wanted) {
  for (int i = 0; i < 100; ++i) {
    if (wanted.find(state_of(pid)) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A build-like tree: a group leader whose child leaves the group with setsid (a daemon) and spins.
pid_t start_tree(int pipe_to_parent) {
  const pid_t leader = ::fork();
  if (leader == 0) {
    ::setpgid(0, 0);
    const pid_t daemon = ::fork();
    if (daemon == 0) {
      ::setsid();
      const int me = ::getpid();
      (void)::write(pipe_to_parent, &me, sizeof me);
      while (true) {
      }
    }
    while (true)
      ::pause();
  }
  ::setpgid(leader, leader);
  return leader;
}

} // namespace

TEST_CASE("a build and the daemon it started stand still while a slot times, and go on after") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t leader = start_tree(fds[1]);
  int daemon = 0;
  REQUIRE(::read(fds[0], &daemon, sizeof daemon) == sizeof daemon);
  {
    kj::exec::quiet_builds::enrolled build(leader);
    CHECK(build.stopped() == std::chrono::steady_clock::duration{});
    kj::exec::quiet_builds::hold();
    kj::exec::quiet_builds::hold(); // a second slot times too
    CHECK(kj::exec::quiet_builds::holds() == 2);
    CHECK(reaches(leader, "T"));
    CHECK(reaches(daemon, "T"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    kj::exec::quiet_builds::release(); // one slot is still timing: they stay stopped
    CHECK(reaches(daemon, "T"));
    kj::exec::quiet_builds::release();
    CHECK(kj::exec::quiet_builds::holds() == 0);
    CHECK(reaches(leader, "SR"));
    CHECK(reaches(daemon, "R"));
    CHECK(build.stopped() >= std::chrono::milliseconds(100));
    kj::exec::quiet_builds::release(); // more releases than holds change nothing
    CHECK(kj::exec::quiet_builds::holds() == 0);

    // A build enrolled while a slot times is stopped at once.
    kj::exec::quiet_builds::hold();
    const pid_t late = ::fork();
    if (late == 0) {
      while (true) {
      }
    }
    ::setpgid(late, late);
    {
      kj::exec::quiet_builds::enrolled late_build(late);
      CHECK(reaches(late, "T"));
    } // leaving while held continues it (it is killed next)
    CHECK(reaches(late, "R"));
    ::kill(late, SIGKILL);
    ::waitpid(late, nullptr, 0);
    kj::exec::quiet_builds::release();
  }
  ::kill(daemon, SIGKILL);
  ::kill(-leader, SIGKILL);
  ::waitpid(leader, nullptr, 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("descendants lists children, grandchildren and a daemon that left the group") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t leader = start_tree(fds[1]);
  int daemon = 0;
  REQUIRE(::read(fds[0], &daemon, sizeof daemon) == sizeof daemon);
  const auto mine = kj::exec::descendants(::getpid());
  CHECK(std::find(mine.begin(), mine.end(), leader) != mine.end());
  CHECK(std::find(mine.begin(), mine.end(), daemon) != mine.end());
  ::kill(daemon, SIGKILL);
  ::kill(-leader, SIGKILL);
  ::waitpid(leader, nullptr, 0);
  ::close(fds[0]);
  ::close(fds[1]);
}

namespace {

// A stand-in worker: `script` run by sh in place of `kj worker` (its report pipe is descriptor 3).
kj::exec::worker_launch stand_in(const kj::test::scratch_dir& dir, const std::string& name,
                                 const std::string& script) {
  kj::exec::worker_launch launch;
  launch.job_file = dir / (name + ".json");
  launch.log_file = dir / (name + ".log");
  launch.environment = {{"PATH", "/usr/bin:/bin"}};
  launch.wrapper = {"/bin/sh", "-c", script};
  return launch;
}

} // namespace

TEST_CASE("a judge's quiet lines stop a build beside it, whose limit does not count the pause") {
  kj::test::scratch_dir dir;
  // The build: 0.6 s of work by the clock of a process that runs (a busy loop reading its own CPU time),
  // within a 3 s limit; a judge holds the host quiet for 3.5 s meanwhile, so the build ends after about 4 s:
  // past its limit only if the pause counted. (The work is short against the limit so that a loaded 2-core
  // host, as CI's quick tests two at a time, still runs it within the limit: 1.5 s of work in a 2.5 s limit
  // failed there.)
  kj::exec::worker_launch build = stand_in(
      dir, "build",
      "python3 -c 'import time\nwhile time.process_time() < 0.6: pass' && echo '{\"type\":\"built\"}' >&3");
  build.timeout = std::chrono::milliseconds(3000);
  build.quiet_while_timing = true;
  kj::exec::worker_launch judge =
      stand_in(dir, "judge",
               "sleep 0.1; echo '{\"type\":\"quiet\",\"on\":true}' >&3; sleep 3.5; "
               "echo '{\"type\":\"quiet\",\"on\":false}' >&3; echo "
               "'{\"type\":\"verdict\"}' >&3");
  judge.own_limit = std::chrono::milliseconds(60'000); // an evaluation's judge: its quiet lines count
  kj::exec::worker_outcome built, judged;
  std::thread building([&] { built = kj::exec::run_worker_process(build); });
  judged = kj::exec::run_worker_process(judge);
  building.join();
  INFO(kj::exec::file_tail(build.log_file, 2000));
  CHECK_FALSE(built.timed_out);
  REQUIRE(built.events.size() == 1);
  CHECK(built.events[0]["type"] == "built");
  CHECK(built.stood_still_s > 3);
  CHECK(built.wall_s > 3); // it would have timed out had the pause counted
  CHECK(built.wall_s - built.stood_still_s < 3);
  REQUIRE(judged.events.size() == 1); // the quiet lines are the orchestrator's, not the worker's reports
  CHECK(judged.events[0]["type"] == "verdict");
  CHECK(kj::exec::quiet_builds::holds() == 0);
}

TEST_CASE("a judge that dies while it holds the host quiet lets the builds go") {
  kj::test::scratch_dir dir;
  kj::exec::worker_launch judge =
      stand_in(dir, "judge", "echo '{\"type\":\"quiet\",\"on\":true}' >&3; sleep 0.2; kill -9 $$");
  judge.own_limit = std::chrono::milliseconds(60'000);
  const kj::exec::worker_outcome judged = kj::exec::run_worker_process(judge);
  CHECK(judged.term_signal == SIGKILL);
  CHECK(kj::exec::quiet_builds::holds() == 0);
}

TEST_CASE("a build's own quiet line stops nothing: only an evaluation's judge holds the host quiet") {
  kj::test::scratch_dir dir;
  kj::exec::worker_launch build =
      stand_in(dir, "build", "echo '{\"type\":\"quiet\",\"on\":true}' >&3; sleep 0.3");
  build.quiet_while_timing = true;
  std::thread watching([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    CHECK(kj::exec::quiet_builds::holds() == 0);
  });
  const kj::exec::worker_outcome built = kj::exec::run_worker_process(build);
  watching.join();
  CHECK(built.stood_still_s == 0);
  CHECK(built.events.empty());
}
