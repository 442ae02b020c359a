// Both subjects of a pair timed on one CPU (opt-in, KJ_TIMING_CPU=shared; docs/methodology.md): the judge
// times the reference on `timed` and waits for the runner's replies on `waiting`, and the runner times the
// candidate on `timed` (the round's "tb" request names it). Where the event window is mostly the host
// launching kernels (host-bound models), what is compared is the two processes' CPU as much as the two
// forwards: one CPU for both holds that constant. Off by default until a GPU has measured it (issue 41).
#pragma once

#include <nlohmann/json.hpp>
#include <sched.h>

namespace kj::worker {

struct timing_cpus {
  int timed = -1;   // the CPU both subjects are timed on; -1: not pinned
  int waiting = -1; // the judge's thread while the runner's call runs
  bool on() const { return timed >= 0 && waiting >= 0; }
  nlohmann::json to_json() const { return {{"timed", timed}, {"waiting", waiting}}; }
};

// KJ_TIMING_CPU=shared: two CPUs of this thread's affinity, the pair of the slot's GPU (the first index of
// CUDA_VISIBLE_DEVICES, so that the slots of one machine take different CPUs); otherwise, or with fewer than
// two CPUs, none.
timing_cpus choose_timing_cpus();

// The calling thread on `cpu` while it lives (-1, or a CPU the thread may not use: nothing changes); its
// affinity as before afterwards.
class thread_on_cpu {
public:
  explicit thread_on_cpu(int cpu);
  ~thread_on_cpu();
  thread_on_cpu(const thread_on_cpu&) = delete;
  thread_on_cpu& operator=(const thread_on_cpu&) = delete;
  bool pinned() const { return m_pinned; }

private:
  cpu_set_t m_saved{};
  bool m_pinned = false;
};

} // namespace kj::worker
