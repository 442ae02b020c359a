// NVML snapshots of the timed GPU: clocks, temperature, power, throttle reasons and the processes on it.
#pragma once

#include "cuda/cuda_plugin.h"
#include "cuda/driver.hpp"

#include <cstdint>
#include <set>
#include <string>

namespace kj::cuda {

// True when the plugin was built with nvml.h (KJ_HAVE_NVML).
bool nvml_available();

// Reads everything NVML will tell about `device` (found by PCI bus id, so CUDA_VISIBLE_DEVICES does not
// confuse the two numberings); values NVML refuses stay -1. Throws unavailable_error without NVML, or when
// NVML cannot be initialized or does not know the device.
// Processes in `exclude` (besides this one) are not counted as other processes.
kj_cuda_nvml_result take_nvml_snapshot(CUdevice device, const std::set<unsigned int>& exclude);

// The names of the set bits of an NVML clocks-event (throttle) reason mask, comma-separated; "none" for 0.
std::string clocks_event_text(std::uint64_t reasons);

} // namespace kj::cuda
