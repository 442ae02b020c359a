// The scheduler: a queue of tasks, a build pool (CPU) and one device slot per GPU. Each task is some builds,
// then at most one device job; what the jobs mean is the planner's business (callbacks), not the scheduler's.
#pragma once

#include "engine/exec/build_cache.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/warm_worker.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kj::scheduler {

// A compile step: runs on the build pool. With a cache key it is a content-addressed build
// (exec::build_cache::build: cached results are reused, one build per key); without, a plain job (for
// example a baseline's torch.compile, which warms Inductor's cache).
struct build_step {
  exec::job message;
  exec::launch_spec launch;
  std::string cache_key;
};

struct build_done {
  exec::build_record record;    // keyed builds: status, log, seconds, cached
  exec::worker_outcome outcome; // plain jobs: what the worker reported
  std::string log_tail;
};

struct device_step {
  exec::job message;
  exec::launch_spec launch; // the slot's environment (CUDA_VISIBLE_DEVICES) is added to it
  std::function<void(const nlohmann::json&)> on_event; // called from the slot's thread as events arrive
  // An evaluation the slot's warm judge may run (exec/warm_worker.hpp): Python, torch and the device context
  // start once per slot; false: a worker of its own.
  bool warm = false;
};

struct device_done {
  exec::worker_outcome outcome;
  std::string log_tail;
  std::string slot; // the slot's name, e.g. "cuda:1"
};

struct task {
  std::string name;
  std::string label;              // for people, e.g. "L1 19_ReLU identity s0" (progress); "" uses `name`
  std::vector<build_step> builds; // run in parallel on the pool, before the device step
  std::size_t reused_builds = 0;  // builds the cache already held (not in `builds`): for progress messages
  // Once the builds are done: the device step, or none (the task ends there, e.g. its build failed).
  std::function<std::optional<device_step>(const std::vector<build_done>&)> plan_device;
  // At the end, with the device step's outcome (null when none ran). It may return follow-up tasks.
  std::function<std::vector<task>(const std::vector<build_done>&, const device_done*)> finish;
};

struct device_slot {
  std::string name;                               // "cpu", "cuda:0", ...
  std::map<std::string, std::string> environment; // e.g. CUDA_VISIBLE_DEVICES=0
};

// Told when a build or device job starts and ends (from the pool's and slots' threads, concurrently): what
// a heartbeat shows while nothing finishes for a while.
class job_observer {
public:
  virtual ~job_observer() = default;
  virtual void started(bool build, const std::string& label, const std::string& slot) = 0;
  virtual void finished(bool build, const std::string& label, const std::string& slot) = 0;
};

struct options {
  int build_jobs = 0; // builds at once; 0: default_build_jobs()
  job_observer* observer = nullptr;
  std::vector<device_slot> slots; // at least one
  // true: later tasks build while earlier ones hold a device (a GPU is not idle while the next candidate
  // compiles); false: every build finishes before any device job starts (CPU timing must not share the
  // machine with a compiler).
  bool overlap = true;
};

class scheduler {
public:
  scheduler(const exec::job_runner& runner, const exec::build_cache& cache, options opts);

  // Runs the tasks and their follow-ups to the end. Callbacks are called one at a time (never concurrently),
  // device steps start in task order. Returns false when the user interrupted (the jobs in flight are
  // killed, unstarted tasks never start). An exception from a callback stops the run and is rethrown.
  bool run(std::vector<task> tasks) const;

private:
  const exec::job_runner& m_runner;
  const exec::build_cache& m_cache;
  options m_options;
};

// The default build parallelism: the number of cores, at most 8. Beside timing (`beside_slots` device slots
// judging while builds run), the cores a slot's judge and runner poll on are left free: cores - 2 x slots -
// 1, at least 1 (each build then compiles one file at a time: MAX_JOBS=1).
int default_build_jobs(std::size_t beside_slots = 0);

// The device slots for a device: one "cpu" slot, or one per listed GPU (CUDA_VISIBLE_DEVICES=<id>). GPU
// numbers are torch's, as kj's own process sees them: where kj itself runs under CUDA_VISIBLE_DEVICES (a
// user's shell, a Ray task, a Slurm job), GPU i is the list's i-th entry, never the machine's GPU i.
std::vector<device_slot> device_slots(device_kind device, const std::vector<int>& gpus);
// The CUDA_VISIBLE_DEVICES value that shows a worker torch's GPU `gpu` of a process that sees `visible` (its
// own CUDA_VISIBLE_DEVICES; null when unset: every GPU, as CUDA numbers them). A GPU past the list throws.
std::string worker_gpu(int gpu, const char* visible);

// Whether a candidate compiles anything at import (it uses torch.utils.cpp_extension).
bool needs_build(const std::string& candidate_source);

} // namespace kj::scheduler
