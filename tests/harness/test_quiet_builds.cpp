// kj's builds stand still while a device slot times (engine/exec/quiet_builds.hpp): every process of an
// enrolled build, a daemon that left its process group included, is stopped while a slot holds the host quiet
// and continued when the last slot lets go; the time it stood still is counted.
#include "engine/exec/process.hpp"
#include "engine/exec/quiet_builds.hpp"
#include "tests/support/catch_compat.hpp"

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
