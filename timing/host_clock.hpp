// The host clock used for every wall-time measurement: steady, monotonic, in milliseconds.
#pragma once

#include <chrono>

namespace kj::timing {

using host_clock = std::chrono::steady_clock;

inline double elapsed_ms(host_clock::time_point start, host_clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

// Milliseconds since an arbitrary fixed point (for timestamps in samples).
double host_now_ms();

} // namespace kj::timing
