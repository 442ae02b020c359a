// A judge that stays warm on its device slot: one `kj worker --jobs-fd` process runs the slot's evaluations
// one after another, so that Python, torch and the device context start once per slot, not once per
// candidate (engine/worker/worker.hpp serve_evaluations). Each job is run, limited and reported as
// job_runner::run would run it in a worker of its own; a worker that ended badly (a crash, a time limit,
// Ctrl-C) or was started with another environment is replaced by a fresh one for the next job.
#pragma once

#include "engine/exec/job_runner.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kj::exec {

class warm_worker {
public:
  explicit warm_worker(const job_runner& runner) : m_runner(runner) {}
  ~warm_worker();
  warm_worker(const warm_worker&) = delete;
  warm_worker& operator=(const warm_worker&) = delete;

  // An evaluation on the warm judge (started on first use). What job_runner::run returns for it.
  worker_outcome run(const job& message, const launch_spec& launch, std::string* log_tail = nullptr,
                     const std::function<void(const nlohmann::json&)>& on_event = {});
  // How many workers it started so far (tests: one for a run's evaluations).
  int starts() const { return m_starts; }

private:
  void start(const launch_spec& launch);
  void stop();
  void ended(worker_outcome& outcome); // the worker exited: how, and it is gone
  bool gone();                         // it exited while it waited for a job (reaped here)
  void remove_home();
  worker_outcome attempt(const job& message, const launch_spec& launch, std::string* log_tail,
                         const std::function<void(const nlohmann::json&)>& on_event, bool& reached);

  const job_runner& m_runner;
  pid_t m_pid = -1;
  int m_jobs_fd = -1, m_events_fd = -1;
  std::string m_pending; // report bytes after the last full line
  std::filesystem::path m_home, m_log;
  std::map<std::string, std::string> m_environment; // the launch environment it was started with
  std::vector<std::string> m_wrapper;
  unsigned m_jobs = 0;
  int m_starts = 0;
};

} // namespace kj::exec
