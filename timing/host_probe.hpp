// A short fixed workload timed on the host before and after each subject, so that a change of the host's
// speed (a shared machine's CPU clock, a neighbour's load on the caches) can be told apart from a change of
// the code: launch-bound forwards, whose samples are mostly the host issuing kernels, move with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace kj::timing {

struct host_probe_result {
  double cpu_ns = 0; // [ns] per step of a dependent multiply-add chain (~ cycles / clock frequency)
  double mem_ns = 0; // [ns] per step of a pointer chase through a buffer the size of a shared cache (noisy)
};

// How far a series of probes moved: max/min - 1 of cpu_ns (0.12: one probe of the series found the core 12%
// slower than another); 0 for fewer than two usable probes. mem_ns is recorded but not counted: a chase that
// misses the caches moves by tens of percent with the memory traffic of the timed code itself.
double host_change(const std::vector<host_probe_result>& probes);

// The steadiest of at most `max_attempts` calls of `attempt` (which returns {result, host change}): it stops
// at the first whose change is at most `max_change`, or when `may_retry()` says no time is left for another,
// else keeps the one with the smallest change. A shared machine's neighbour is often gone a second later.
// Returns {result, change, attempts made}.
template <class Result>
struct steadiest_result {
  Result result;
  double change = 0;
  int attempts = 0;
};

template <class Attempt, class MayRetry>
auto steadiest_attempt(Attempt attempt, int max_attempts, double max_change, MayRetry may_retry)
    -> steadiest_result<decltype(attempt().first)> {
  auto [best, best_change] = attempt();
  int attempts = 1;
  for (; attempts < max_attempts && best_change > max_change && may_retry(); ++attempts) {
    auto [again, change] = attempt();
    if (change < best_change) best = std::move(again), best_change = change;
  }
  return {std::move(best), best_change, attempts};
}

class host_probe {
public:
  // chase_bytes: the pointer chase's buffer (a random cycle over its cache lines, built here).
  explicit host_probe(std::size_t chase_bytes = std::size_t{8} << 20,
                      std::size_t cpu_steps = std::size_t{1} << 18,
                      std::size_t chase_steps = std::size_t{1} << 16);

  // Each measure is the fastest of `repeats` runs, so a single interruption does not count. A few ms.
  host_probe_result measure(int repeats = 3);

  // The number of cache lines the chase visits before it returns to its start: all of the buffer's lines.
  std::size_t chase_cycle_lines() const;
  std::size_t chase_lines() const;

private:
  std::vector<std::uint32_t> m_next; // m_next[i]: the cache line visited after line i (one slot per line)
  std::size_t m_cpu_steps;
  std::size_t m_chase_steps;
  volatile std::uint64_t m_sink = 0;
};

} // namespace kj::timing
