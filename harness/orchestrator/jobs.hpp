// Running one job spec in a worker: the scratch folder, the environment, the extension build cache.
#pragma once

#include "harness/job.hpp"
#include "harness/orchestrator/worker_process.hpp"

#include <filesystem>
#include <string>

namespace kj::orchestrator {

struct job_runner {
  std::filesystem::path cache_dir; // holds torch_extensions/ (the build cache) and scratch/
  std::chrono::milliseconds timeout{600'000};
  bool keep_scratch = false;

  // Writes the job into a fresh scratch folder named `name`, runs a worker on it and returns what it
  // reported. `log_tail` receives the end of the worker's output when the job did not end cleanly.
  worker_outcome run(const job_spec& job, const std::string& name, std::string* log_tail = nullptr,
                     const std::function<void(const nlohmann::json&)>& on_event = {}) const;
};

// The default cache folder: $KJ_CACHE_DIR, else $XDG_CACHE_HOME/kerneljudge, else ~/.cache/kerneljudge.
std::filesystem::path default_cache_dir();

// The first event of the given type, or null.
const nlohmann::json* find_event(const worker_outcome& outcome, const std::string& type);

} // namespace kj::orchestrator
