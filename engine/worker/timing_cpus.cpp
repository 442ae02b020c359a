// Implements timing_cpus (timing_cpus.hpp).
#include "engine/worker/timing_cpus.hpp"

#include <cstdlib>
#include <string>
#include <vector>

namespace kj::worker {

timing_cpus choose_timing_cpus() {
  const char* mode = std::getenv("KJ_TIMING_CPU");
  if (!mode || std::string(mode) != "shared") return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.size() < 2) return {};
  std::size_t slot = 0;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
      visible && *visible >= '0' && *visible <= '9')
    slot = static_cast<std::size_t>(std::strtoul(visible, nullptr, 10));
  const std::size_t first = (2 * slot) % cpus.size();
  return {cpus[first], cpus[(first + 1) % cpus.size()]};
}

thread_on_cpu::thread_on_cpu(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE || ::sched_getaffinity(0, sizeof m_saved, &m_saved) != 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  m_pinned = ::sched_setaffinity(0, sizeof one, &one) == 0;
}

thread_on_cpu::~thread_on_cpu() {
  if (m_pinned) (void)::sched_setaffinity(0, sizeof m_saved, &m_saved);
}

} // namespace kj::worker
