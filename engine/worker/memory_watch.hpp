// What an evaluation held: the device's memory sampled while it runs, and the peaks of judge and runner.
#pragma once

#include "cuda/plugin_loader.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <thread>

namespace kj::worker {

// Samples the device's used memory (total - free, every process on it) every few milliseconds on a thread of
// its own, from construction to destruction; pause() while timing, so that no driver call lands beside a
// sample. Without a plugin it samples nothing.
class device_memory_watch {
public:
  explicit device_memory_watch(const cuda::plugin* plugin,
                               std::chrono::milliseconds every = std::chrono::milliseconds(5));
  ~device_memory_watch();
  device_memory_watch(const device_memory_watch&) = delete;
  device_memory_watch& operator=(const device_memory_watch&) = delete;

  void pause(bool paused) { m_paused = paused; }
  // The largest used memory seen [bytes]; 0 when nothing was sampled.
  std::uint64_t peak_used() const { return m_peak; }
  std::uint64_t total() const { return m_total; }

private:
  void loop();

  const cuda::plugin* m_plugin;
  std::chrono::milliseconds m_every;
  std::atomic<bool> m_stop{false}, m_paused{false};
  std::atomic<std::uint64_t> m_peak{0}, m_total{0};
  std::thread m_thread;
};

// The "memory" event of an evaluation: device_peak_bytes (sampled), judge_device_bytes, runner_device_bytes
// (torch's peak reserved memory of each process; the judge's includes the largest arena), judge_rss_bytes,
// runner_rss_bytes (peak resident host memory), budget_bytes (the memory model's per-case budget).
nlohmann::json memory_event(const nlohmann::json& judge_peaks, const nlohmann::json& runner_peaks,
                            std::uint64_t runner_rss, const device_memory_watch& watch,
                            std::uint64_t budget_bytes);

} // namespace kj::worker
