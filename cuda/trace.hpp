// CUPTI kernel traces (all streams), taken in a pass of their own, never during timing samples.
#pragma once

#include "cuda/driver.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace kj::cuda {

// CUPTI could not give the timed stream's id (summaries then count any second stream as a side stream).
inline constexpr std::uint32_t k_unknown_stream = 0xffffffffU;

struct traced_kernel {
  std::string name;    // demangled when possible
  std::string mangled; // as CUPTI reported it
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::int32_t grid[3] = {0, 0, 0};
  std::int32_t block[3] = {0, 0, 0};
  std::int32_t registers_per_thread = 0;
  std::int32_t static_shared_bytes = 0;
  std::int32_t dynamic_shared_bytes = 0;
};

struct trace_data {
  std::vector<traced_kernel> kernels;
  std::uint32_t timed_stream_id = k_unknown_stream;
  std::uint64_t dropped_records = 0;
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
};

// True when the plugin was built with CUPTI.
bool cupti_available();
int cupti_api_version();

// Starts recording CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL into 8 MiB buffers. Throws state_error while a trace
// runs, unavailable_error without CUPTI.
void trace_begin(CUstream timed_stream);
// Synchronizes the context, flushes CUPTI's buffers, stops recording and returns the kernels. The trace ends
// even when this throws.
trace_data trace_end();

} // namespace kj::cuda
