// The build pool: compiles candidates' extensions in parallel worker processes before any timing starts.
#pragma once

#include "harness/orchestrator/jobs.hpp"

#include <string>
#include <vector>

namespace kj::orchestrator {

struct build_request {
  job_spec job; // mode "evaluate" becomes "build"; "baseline_compile" is kept
  std::string name;
};

struct build_outcome {
  bool built = false; // the worker reported "built": the candidate imported, or the baseline compiled
  worker_outcome outcome;
  std::string log_tail;
};

// Runs the requests on up to `parallel` workers at once; results are in request order. `on_done` is called
// (from worker threads, serialized) after each request finishes.
std::vector<build_outcome>
build_all(const job_runner& runner, std::vector<build_request> requests, int parallel,
          const std::function<void(std::size_t index, const build_outcome&)>& on_done = {});

// Whether a candidate compiles anything at import (it uses torch.utils.cpp_extension).
bool needs_build(const std::string& candidate_source);

// The default parallelism: the number of cores, at most 8.
int default_build_jobs();

} // namespace kj::orchestrator
