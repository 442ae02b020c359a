// Runners started ahead: while one candidate is judged, the next one's runner (its sandbox, Python, torch and
// on CUDA a context) starts, so that a judge serving evaluations one after another (`kj worker --serve`)
// never waits for a runner to start. Each runner still serves exactly one candidate and is never reused.
#pragma once

#include "engine/worker/runner_link.hpp"

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kj::worker {

class runner_pool {
public:
  // `root`: the folder of the runners' own folders (scratch and extensions), removed as they end.
  explicit runner_pool(std::filesystem::path root);
  ~runner_pool();
  runner_pool(const runner_pool&) = delete;
  runner_pool& operator=(const runner_pool&) = delete;

  // The job's runner, loaded (load() tells how that went): the spare when it was started as this job would
  // start it, else a fresh one. A spare that died before its candidate arrived (kj's runner failed before the
  // load) is replaced by a fresh runner, never blamed on the candidate. With `more_jobs`, where the last
  // job's runner had a PID namespace of its own, the next job's runner is started first; it stands still
  // while this one's calibration is measured, and is ended before a candidate loads in kj's PID namespace.
  std::unique_ptr<runner_link> connect(const runner_spec& job, const cuda::plugin* plugin, bool more_jobs);
  // Starts the next job's runner now, as `job`'s was started (it stands still during a handshake's
  // calibration), unless give_back() was called in this job or a spare is there already.
  void start_next(const runner_spec& job);
  // While the judge times, the spare stands still: its start shares neither the cores nor the device with
  // a timing.
  void freeze(bool stopped);
  // Ends the spare, and starts none until the next job: kj's own work ran out of device memory, and the
  // spare's context is kj's to give back before anything is blamed (kj_judge.Memory.make_room).
  void give_back();
  // freeze(true) while it lives (no pool: nothing).
  struct frozen {
    explicit frozen(runner_pool* pool) : m_pool(pool) {
      if (m_pool) m_pool->freeze(true);
    }
    ~frozen() {
      if (m_pool) m_pool->freeze(false);
    }
    frozen(const frozen&) = delete;
    frozen& operator=(const frozen&) = delete;

  private:
    runner_pool* m_pool;
  };

private:
  void drop_spare();
  void remove_used();
  std::unique_ptr<runner_link> launch_own(const runner_spec& job);
  void connect_one(runner_link& link, const cuda::plugin* plugin);
  void isolated(bool yes); // what the last runner showed: without a PID namespace, no spare is kept
  std::map<std::string, std::string> m_environment; // the judge's at its start: every runner starts from it
  bool m_held = false;                              // give_back() in this job
  bool m_isolated = false;                          // the last job's runner had a PID namespace of its own
  std::filesystem::path m_root;
  unsigned m_next = 0;
  std::unique_ptr<runner_link> m_spare;
  std::vector<std::filesystem::path> m_used; // folders of runners handed out: removed once they are done
  std::filesystem::path m_spare_dir;
};

} // namespace kj::worker
