// The parts of starting a worker that a one-job worker (process.hpp) and a judge serving many
// (warm_worker.hpp) share: the prepared exec, the child's side of the fork, the report lines.
#pragma once

#include "engine/exec/process.hpp"
#include "engine/exec/quiet_builds.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace kj::exec::detail {

// Everything the child needs is built before fork (kj has threads: after fork only async-signal-safe calls).
struct prepared_exec {
  std::string program; // /proc/self/exe, bwrap, or the wrapper
  std::vector<std::string> args, env;
  std::vector<char*> argv, envp;
};

// The worker's argv and envp: `kj worker --job FILE`, or with no job file `kj worker --jobs-fd 4`.
prepared_exec prepare(const worker_launch& launch);

// The child after fork: its own group, dies with kj, descriptors 0-3 (and 4: `jobs_fd` when >= 0) only.
[[noreturn]] void exec_worker(const worker_launch& launch, const prepared_exec& p, int report_fd, int log_fd,
                              int null_fd, pid_t kj, int jobs_fd);

// Whether this worker holds kj's builds still: a judge's "quiet" lines (engine/worker/judge_timing.cpp) say
// when it times; a worker that ends while it holds them lets them go.
struct quiet_hold {
  bool allowed = false; // only an evaluation's judge (kj's code, own_limit set): never a build, whose report
                        // pipe the candidate's module code can write to
  bool held = false;
  void set(bool on) {
    if (on == held || (on && !allowed)) return;
    held = on;
    on ? quiet_builds::hold() : quiet_builds::release();
  }
  ~quiet_hold() { set(false); }
};

// One report line: a clock or quiet line is applied, anything else becomes an event (`at`: [s] since the
// job began).
void handle_line(std::string_view line, worker_outcome& outcome,
                 const std::function<void(const nlohmann::json&)>& on_event, double at, quiet_hold& quiet);

} // namespace kj::exec::detail
