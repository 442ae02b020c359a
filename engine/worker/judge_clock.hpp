// Whose an evaluation's seconds are: the candidate's (the judge waits for the candidate's process) or kj's
// own (everything else the judge does: the reference, the strict checks of the outputs, statistics). The
// candidate's limit (--timeout) counts only the candidate's; a thread reports both to the orchestrator every
// half second, which extends its own deadline for the worker by kj's time (engine/exec/process.hpp).
#pragma once

#include "engine/worker/channel.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace kj::worker {

class judge_clock {
public:
  using clock = std::chrono::steady_clock;
  // `budget`: how long the judge may wait for the candidate's process in all; reports start at once when a
  // channel is given (null: none, for tests).
  judge_clock(std::chrono::milliseconds budget, result_channel* channel,
              std::chrono::milliseconds every = std::chrono::milliseconds(500));
  ~judge_clock();
  judge_clock(const judge_clock&) = delete;
  judge_clock& operator=(const judge_clock&) = delete;

  // A wait for the candidate's process, charged to it (charge false: kj's own runner start, before the
  // candidate is loaded: bounded by the budget, charged to nobody). Its first `allowance` is not charged:
  // kj's own work the process does first (the draw of a checked call's inputs), bounded by the judge's own.
  class wait {
  public:
    wait(judge_clock& c, bool charge, std::chrono::nanoseconds allowance = {});
    ~wait();
    wait(const wait&) = delete;
    wait& operator=(const wait&) = delete;

  private:
    judge_clock& m_clock;
    bool m_charge;
    clock::time_point m_start;
    std::chrono::nanoseconds m_allowance;
  };

  // Gives back `ms` of a wait already charged (never more than was charged): kj's own work the candidate's
  // process did for kj during that wait (a timed call's draw and flush), bounded by the caller.
  void refund(double ms);

  // What is left of the budget (never below zero).
  std::chrono::milliseconds candidate_left() const;
  std::chrono::milliseconds budget() const { return m_budget; }
  // [s] charged to the candidate so far (a wait in progress included), and the rest of the time since the
  // clock was made: kj's own.
  double candidate_s() const;
  double own_s() const;
  // The clock event: {"type": "clock", "candidate_s", "own_s", "waiting"}.
  nlohmann::json report() const;

private:
  void loop(result_channel& channel);

  std::chrono::milliseconds m_budget;
  std::chrono::milliseconds m_every;
  clock::time_point m_made = clock::now();
  std::atomic<std::int64_t> m_charged_ns{0};
  std::atomic<std::int64_t> m_waiting_since_ns{0}; // since m_made; 0: not waiting on a charged wait
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
};

} // namespace kj::worker
