// `kj runner`: the candidate's process. It serves the judge's requests on one socket (load, forward, time,
// trace, findings) and reports nothing anywhere else; see engine/worker/kj_runner.py.
#pragma once

#include "core/device_kind.hpp"

namespace kj::worker {

struct runner_options {
  int socket_fd = 3;
  device_kind device = device_kind::cpu;
};

// Returns the process exit code.
int run_runner(const runner_options& options);

} // namespace kj::worker
