// kj's own builds stand still while a device slot times. A compiler of kj's that shares the host with a timed
// round takes the core the judge or the runner needs at the moment one wakes the other: the judge's clock
// then sees a call's bracket grow by a time slice the runner never saw, and refuses an honest candidate's
// timing (an H200 beside eight builds: 3.9 ms per call on a 0.4 ms sample, 2026-12-03). So every process of a
// build worker (its process group and every descendant, a daemon that left the group included) is stopped
// with SIGSTOP from the moment a judge reports that it times until the last timing slot is done, then
// continued with SIGCONT; a build's time limit does not count the time it stood still. The scheduler enrolls
// builds only when the run has one device slot (with several, one times nearly always and builds would
// starve).
#pragma once

#include <chrono>
#include <sys/types.h>

namespace kj::exec {

namespace quiet_builds {

// A timing slot begins (the first one stops every enrolled build) or ends (the last one continues them).
void hold();
void release();
// How many timing slots hold the host quiet now.
int holds();

// A build worker, enrolled for as long as it lives: stopped at once while the host is held quiet.
class enrolled {
public:
  explicit enrolled(pid_t root);
  ~enrolled();
  enrolled(const enrolled&) = delete;
  enrolled& operator=(const enrolled&) = delete;
  // How long it has stood still so far (a pause in progress included).
  std::chrono::steady_clock::duration stopped() const;

private:
  pid_t m_root;
};

} // namespace quiet_builds
} // namespace kj::exec
