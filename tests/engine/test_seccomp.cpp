// The candidates' seccomp filter (engine/exec/sandbox.hpp), installed in a child process: limits, scheduling
// and priorities of itself only, no tracing or memory access of others, signals only at home.
#include "engine/exec/sandbox.hpp"
#include "tests/support/catch_compat.hpp"

#include <cerrno>
#include <csignal>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// Runs `body` in a child with the filter installed; its exit code (0: every expectation held, 1: the filter
// did not install, else the number of the first expectation that failed).
template <class Body>
int in_filtered_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::string error;
    if (!kj::exec::install_candidate_seccomp(error)) ::_exit(1);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

bool refused(long result) {
  return result == -1 && errno == EPERM;
}

} // namespace

TEST_CASE("the filter refuses limits, scheduling and priorities of any process but the caller's own") {
  if (!kj::exec::have_seccomp()) {
    WARN("kj was built without libseccomp");
    return;
  }
  const pid_t parent = ::getpid();
  const int code = in_filtered_child([parent] {
    rlimit low{1, 1}, got{};
    if (!refused(::syscall(SYS_prlimit64, parent, RLIMIT_FSIZE, &low, nullptr))) return 2;
    if (!refused(::syscall(SYS_prlimit64, parent, RLIMIT_NOFILE, nullptr, &got))) return 3;
    if (::syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, nullptr, &got) != 0) return 4; // its own: allowed
    if (::syscall(SYS_prlimit64, ::getpid(), RLIMIT_NOFILE, nullptr, &got) != 0) return 5;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (!refused(::sched_setaffinity(parent, sizeof one, &one))) return 6;
    if (!refused(::setpriority(PRIO_PROCESS, static_cast<id_t>(parent), 19))) return 7;
    if (!refused(::setpriority(PRIO_USER, 0, 19)))
      return 8; // every process of its uid: kj's too, unsandboxed
    if (!refused(::setpriority(PRIO_PGRP, 0, 19))) return 9;
    if (::setpriority(PRIO_PROCESS, 0, 1) != 0) return 10; // itself: allowed
    if (!refused(::syscall(SYS_ioprio_set, 1, parent, 0))) return 11;
    if (!refused(::syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, parent, 0, 0))) return 12;
    if (!refused(::kill(parent, 0))) return 13;
    if (!refused(::syscall(SYS_perf_event_open, nullptr, parent, -1, -1, 0))) return 14;
    return 0;
  });
  CHECK(code == 0);
}
