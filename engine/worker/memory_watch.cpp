// Implements device_memory_watch (a sampling thread over cuMemGetInfo) and the memory event.
#include "engine/worker/memory_watch.hpp"

namespace kj::worker {

device_memory_watch::device_memory_watch(const cuda::plugin* plugin, std::chrono::milliseconds every)
    : m_plugin(plugin), m_every(every) {
  if (m_plugin) m_thread = std::thread(&device_memory_watch::loop, this);
}

device_memory_watch::~device_memory_watch() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
}

void device_memory_watch::loop() {
  while (!m_stop) {
    if (!m_paused) {
      try {
        const auto [free, total] = m_plugin->mem_info();
        m_total = total;
        if (total - free > m_peak) m_peak = total - free;
      } catch (const std::exception&) { // no context (yet, or any more): nothing to sample
      }
    }
    std::this_thread::sleep_for(m_every);
  }
}

nlohmann::json memory_event(const nlohmann::json& judge_peaks, const nlohmann::json& runner_peaks,
                            std::uint64_t runner_rss, const device_memory_watch& watch,
                            std::uint64_t budget_bytes) {
  nlohmann::json event{{"type", "memory"}, {"runner_rss_bytes", runner_rss}, {"budget_bytes", budget_bytes}};
  for (const auto* peaks : {&judge_peaks, &runner_peaks})
    if (peaks->is_object())
      for (const auto& [key, value] : peaks->items())
        if (value.is_number_integer()) event[key] = value;
  if (watch.peak_used() > 0) {
    event["device_peak_bytes"] = watch.peak_used();
    event["device_total_bytes"] = watch.total();
  }
  return event;
}

} // namespace kj::worker
