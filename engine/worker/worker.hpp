// `kj worker`: one process per job, a C++ main with one embedded CPython that imports torch.
#pragma once

#include <filesystem>

namespace kj::worker {

struct worker_options {
  std::filesystem::path job_file;
  int result_fd = 3;
  int jobs_fd = -1; // serve_evaluations: where the job files' paths arrive
};

// Runs the job and reports events on the result channel; returns the process exit code.
int run_worker(const worker_options& options);

// A judge that stays warm on its device slot (engine/exec/warm_worker.hpp): Python, torch and the device
// context start once; then, for each line on `jobs_fd` (a job file's path, and a tab and the folder its
// runners live in before the first), one evaluation, reported as run_worker reports it and ended by a
// {"type": "job_end"} event. Each candidate still gets a runner of its own, started ahead while the one
// before it is judged (runner_pool.hpp). Ends when `jobs_fd` closes.
int serve_evaluations(const worker_options& options);

} // namespace kj::worker
