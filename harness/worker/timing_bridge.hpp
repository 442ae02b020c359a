// Times a Python callable from C++: the worker's bridge to the timing engine (host clock, or CUDA events).
#pragma once

#include "harness/job.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::worker {

struct timing_result {
  std::string method;
  std::string clock;
  std::string stop_reason;
  nlohmann::json params;
  std::vector<double> samples_ms;
};

// What the worker knows about the device it times on.
struct device_context {
  bool cuda = false;
  std::uint64_t stream = 0;   // torch.cuda.current_stream().cuda_stream
  std::function<void()> sync; // waits for all device work (a no-op on the CPU)
};

// Warmup, then samples until the stopping rule is met. On CUDA: CUDA events on the timed stream with an L2
// flush before each sample and a device-wide synchronization inside it (the timing plugin); when the plugin
// cannot be loaded, the host clock around call + synchronize, with the reason recorded in params.
timing_result time_callable(const std::function<void()>& call, const device_context& device,
                            const timing_spec& spec);

// The CUPTI kernel trace of `calls` calls, taken in a pass of its own, summarized (library share, streams,
// side-stream flag against `event_ms`); null when not on CUDA or the plugin is unavailable.
nlohmann::json trace_callable(const std::function<void()>& call, const device_context& device,
                              double event_ms, int calls = 3);

} // namespace kj::worker
