// Running one job in a worker process: its scratch folder, its environment, its time limit.
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/exec/process.hpp"
#include "engine/exec/sandbox.hpp"

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kj::exec {

// How one job is launched: what the job message does not say.
struct launch_spec {
  std::string name; // names the scratch folder, e.g. "L1-19-s0"
  std::chrono::milliseconds timeout{600'000};
  // An evaluation's: how long kj's own work may take beside the candidate's `timeout` (process.hpp).
  std::chrono::milliseconds own_limit{0};
  // Added to the worker's scrubbed environment, e.g. CUDA_VISIBLE_DEVICES for a device slot.
  std::map<std::string, std::string> environment;
  // The candidate's content-addressed build folder (build_cache): torch's extension cache points there.
  // Empty: the job compiles nothing (or compiles into the shared folder of jobs without a candidate).
  std::filesystem::path build_dir;
  std::size_t log_tail_bytes = 4000; // how much of the end of the worker's output run() hands back
  // Jobs that run candidate code (builds): the worker starts in this sandbox, with the scratch folder and the
  // build folder writable (see engine/exec/sandbox.hpp); nullopt for trusted jobs.
  std::optional<sandbox_policy> sandbox;
  int nice = 0;                    // > 0: a lower CPU priority and SCHED_IDLE (builds that run beside timing)
  bool quiet_while_timing = false; // a build: stopped while a device slot times (quiet_builds.hpp)
  // A program and its arguments that start the worker (a profiler such as Nsight Compute); empty: none.
  std::vector<std::string> wrapper;
};

struct job_runner {
  std::filesystem::path cache_dir; // holds builds/, scratch/, inductor/
  bool keep_scratch = false;

  // Writes the job into a fresh scratch folder, runs a worker on it and returns what it reported.
  // `log_tail` receives the end of the worker's output.
  worker_outcome run(const job& message, const launch_spec& launch, std::string* log_tail = nullptr,
                     const std::function<void(const nlohmann::json&)>& on_event = {}) const;
};

// The default cache folder: $KJ_CACHE_DIR, else $XDG_CACHE_HOME/kerneljudge, else ~/.cache/kerneljudge.
std::filesystem::path default_cache_dir();

// The cache folder a command uses: `requested`, or the default when empty; always absolute (the sandbox
// binds it from another working folder, so a relative --cache-dir would name nothing there).
std::filesystem::path cache_dir_or_default(const std::filesystem::path& requested);

// A worker's whole environment: scrubbed_environment(), torch's extension cache at `extensions`, Inductor's
// in the cache folder, its scratch folder, Hugging Face offline, then `added` (a slot's
// CUDA_VISIBLE_DEVICES).
std::map<std::string, std::string> worker_environment(const std::filesystem::path& cache_dir,
                                                      const std::filesystem::path& scratch,
                                                      const std::filesystem::path& extensions,
                                                      const std::map<std::string, std::string>& added);

// The first event of the given type, or null.
const nlohmann::json* find_event(const worker_outcome& outcome, const std::string& type);

} // namespace kj::exec
