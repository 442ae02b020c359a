// Times a Python callable from C++ with the host clock: the worker's bridge to the timing engine.
#pragma once

#include "harness/job.hpp"

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

// Warmup, then samples until the stopping rule is met; `sync` waits for all device work (a no-op on the CPU).
timing_result time_callable(const std::function<void()>& call, const std::function<void()>& sync,
                            const timing_spec& spec, bool cuda);

} // namespace kj::worker
