// The heartbeat: while builds or judgments run and nothing finishes, a line on stderr now and then saying
// what runs and for how long, so a long compile or a slow candidate is never silence.
#pragma once

#include "engine/scheduler/scheduler.hpp"
#include "planning/results/sinks.hpp"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kj::results {

// Lines like
//   kj: compiling: 3 of 14 done; running L1 2_GELU examples s0 (0:45), L1 3_Sum_Reduction examples s1 (0:40)
//   kj: judging L2 3_Gemm_Scale_Softmax identity s0 on cpu: 2:10 so far
// after `interval` without a line from kj (touch() says one was printed), then every `interval`. In the log
// mode (a CI log, nohup) a status line comes every `interval` whatever else was printed:
//   kj: progress: 12 of 48 evaluations in 5:10 (10 correct, 2 incorrect), 2.3/min, ETA 15:40 | judging ...
class heartbeat final : public scheduler::job_observer, public result_sink {
public:
  // progress_mode::none: never print. interval: $KJ_HEARTBEAT_S when set (else 30 s, 60 s in the log mode).
  explicit heartbeat(progress_mode mode);
  heartbeat(progress_mode mode, std::chrono::milliseconds interval);
  ~heartbeat() override;
  heartbeat(const heartbeat&) = delete;
  heartbeat& operator=(const heartbeat&) = delete;

  void started(bool build, const std::string& label, const std::string& slot) override;
  void finished(bool build, const std::string& label, const std::string& slot) override;
  void expect_builds(std::size_t planned);
  void touch(); // a line was printed: the next beat waits a whole interval (not in the log mode)
  void begin(std::size_t planned, std::size_t skipped) override;
  void evaluation(evaluation_result& result) override; // counted; its progress line was printed

  // `fallback`, or $KJ_HEARTBEAT_S seconds.
  static std::chrono::milliseconds
  default_interval(std::chrono::milliseconds fallback = std::chrono::seconds(30));
  // The line for the jobs in flight now ("" when none).
  std::string line() const;
  // The log mode's status line: evaluations done of planned, tallies, rate and ETA, then line().
  std::string status() const;

private:
  using clock = std::chrono::steady_clock;
  struct job {
    bool build = false;
    std::string label;
    std::string slot;
    clock::time_point since;
  };
  void loop();

  progress_mode m_mode;
  std::chrono::milliseconds m_interval;
  clock::time_point m_start = clock::now();
  std::size_t m_planned = 0, m_done = 0;
  std::map<std::string, std::size_t> m_tally;
  mutable std::mutex m_mutex;
  std::condition_variable m_wake;
  std::multimap<clock::time_point, job> m_running;
  std::size_t m_builds_planned = 0, m_builds_done = 0;
  clock::time_point m_last_line = clock::now();
  bool m_stop = false;
  std::thread m_thread;
};

} // namespace kj::results
