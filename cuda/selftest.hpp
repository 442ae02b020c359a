// Self-test helpers: streams and a kernel of known duration, so the timer can be checked on the user's GPU.
#pragma once

#include "cuda/driver.hpp"

#include <cstdint>

namespace kj::cuda {

// The PTX of kj_spin_ns(u64 ns): one thread reads %globaltimer until ns nanoseconds have passed.
extern const char* const k_spin_ptx;

// A stream of the current context created with CU_STREAM_NON_BLOCKING, like torch's side streams: work on it
// does not synchronize with the legacy default stream, so events there do not see it.
std::uint64_t create_stream();
void destroy_stream(std::uint64_t stream);

// Launches kj_spin_ns<<<1, 1, 0, stream>>>(ns); the module is loaded once per context.
void launch_spin(std::uint64_t stream, std::uint64_t ns);

} // namespace kj::cuda
