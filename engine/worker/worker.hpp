// `kj worker`: one process per job, a C++ main with one embedded CPython that imports torch.
#pragma once

#include <filesystem>

namespace kj::worker {

struct worker_options {
  std::filesystem::path job_file;
  int result_fd = 3;
};

// Runs the job and reports events on the result channel; returns the process exit code.
int run_worker(const worker_options& options);

} // namespace kj::worker
