// The plugin's function table as the loader binds it (plugin_loader.cpp, plugin_loader_memory.cpp): every
// function the plugin exports, and a status turned into plugin_error. Internal to kj_cuda_loader.
#pragma once

#include "cuda/plugin_loader.hpp"

namespace kj::cuda {

// Every function the plugin exports (kj_cuda_<name>) and the member it is bound to.
#define KJ_PLUGIN_FUNCTIONS(X)                                                                               \
  X(plugin_abi, abi)                                                                                         \
  X(device_info, device_info)                                                                                \
  X(measure_params_init, measure_params_init)                                                                \
  X(kernelbench_params_init, kernelbench_params_init)                                                        \
  X(measure, measure)                                                                                        \
  X(timer_floor, timer_floor)                                                                                \
  X(measure_kernelbench, measure_kernelbench)                                                                \
  X(measure_result_free, measure_result_free)                                                                \
  X(trace_begin, trace_begin)                                                                                \
  X(trace_end, trace_end)                                                                                    \
  X(trace_result_free, trace_result_free)                                                                    \
  X(nvml_snapshot, nvml_snapshot)                                                                            \
  X(nvml_snapshot_excluding, nvml_snapshot_excluding)                                                        \
  X(sampler_create, sampler_create)                                                                          \
  X(sampler_flush, sampler_flush)                                                                            \
  X(sampler_start, sampler_start)                                                                            \
  X(sampler_stop, sampler_stop)                                                                              \
  X(sampler_destroy, sampler_destroy)                                                                        \
  X(share_alloc, share_alloc)                                                                                \
  X(share_import, share_import)                                                                              \
  X(share_free, share_free)                                                                                  \
  X(stream_create, stream_create)                                                                            \
  X(stream_destroy, stream_destroy)                                                                          \
  X(spin, spin)                                                                                              \
  X(mem_alloc, mem_alloc)                                                                                    \
  X(mem_info, mem_info)                                                                                      \
  X(mem_free, mem_free)                                                                                      \
  X(ipc_get_handle, ipc_get_handle)                                                                          \
  X(ipc_open, ipc_open)                                                                                      \
  X(ipc_close, ipc_close)                                                                                    \
  X(copy_sync, copy_sync)

struct plugin::functions {
#define KJ_PLUGIN_MEMBER(name, member) decltype(&kj_cuda_##name) member = nullptr;
  KJ_PLUGIN_FUNCTIONS(KJ_PLUGIN_MEMBER)
#undef KJ_PLUGIN_MEMBER
};

// A plugin call's status: nothing when it succeeded, else plugin_error with the plugin's message.
inline void throw_status(int status, const kj_cuda_error& error) {
  if (status != KJ_CUDA_OK) throw plugin_error(status, error.message);
}

} // namespace kj::cuda
