// The plugin's extern "C" entry points: argument checks, C++ calls, and exceptions turned into status codes
// (plugin_guard.hpp). Device memory, IPC and streams: plugin_memory.cpp.
#include "cuda/cuda_plugin.h"
#include "cuda/driver.hpp"
#include "cuda/event_subject.hpp"
#include "cuda/ipc.hpp"
#include "cuda/nvml.hpp"
#include "cuda/plugin_guard.hpp"
#include "cuda/selftest.hpp"
#include "cuda/trace.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <new>
#include <set>
#include <string_view>

namespace {

using namespace kj::cuda;
using namespace kj::cuda::plugin_guard;

kj::timing::measure_params to_measure_params(const kj_cuda_measure_params& p) {
  kj::timing::measure_params m;
  m.warmup_min_calls = p.warmup_min_calls;
  m.warmup_min_ms = p.warmup_min_ms;
  m.warmup_max_calls = p.warmup_max_calls;
  m.max_wall_ms = p.max_wall_ms;
  m.stopping.min_samples = p.min_samples;
  m.stopping.min_time_ms = p.min_time_ms;
  m.stopping.target_rel_ci = p.target_rel_ci;
  m.stopping.max_time_ms = p.max_time_ms;
  m.stopping.max_samples = p.max_samples;
  m.stopping.confidence = p.confidence;
  return m;
}

// Binds the context, checks the stream, and picks the flush size (0 when not flushing).
std::size_t prepare(const kj_cuda_measure_params& p) {
  const CUcontext context = bind_context(p.device);
  check_stream(to_stream(p.stream), context);
  if (p.flush_l2 == 0) return 0;
  return p.flush_bytes > 0 ? p.flush_bytes : l2_flusher::default_bytes(context_device());
}

double* copy_array(const std::vector<double>& values) {
  if (values.empty()) return nullptr;
  auto* out = static_cast<double*>(std::malloc(values.size() * sizeof(double)));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, values.data(), values.size() * sizeof(double));
  return out;
}

void fill_result(const event_measurement& m, kj_cuda_measure_result& r) {
  r.event_ms = copy_array(m.events.samples_ms);
  try {
    r.host_ms = copy_array(m.host_ms);
  } catch (...) {
    kj_cuda_measure_result_free(&r);
    throw;
  }
  r.count = m.events.samples_ms.size();
  r.warmup_calls = m.events.warmup_calls;
  r.warmup_ms = m.events.warmup_ms;
  copy_text(r.stop_reason, m.events.stop_reason);
  r.flush_bytes = m.flush_bytes;
}

std::function<void()> wrap(kj_cuda_callback callback, void* user, const char* what) {
  return [callback, user, what] {
    if (callback(user) != 0) throw callback_failed(fmt::format("the {} returned non-zero", what));
  };
}

void fill_trace(trace_data& t, kj_cuda_trace_result& r) {
  std::size_t text_bytes = 0;
  for (const auto& k : t.kernels)
    text_bytes += k.name.size() + 1 + k.mangled.size() + 1;
  auto* records =
      static_cast<kj_cuda_kernel_record*>(std::calloc(t.kernels.size() + 1, sizeof(kj_cuda_kernel_record)));
  auto* text = static_cast<char*>(std::malloc(text_bytes + 1));
  if (records == nullptr || text == nullptr) {
    std::free(records);
    std::free(text);
    throw std::bad_alloc();
  }
  char* cursor = text;
  const auto store = [&cursor](const std::string& s) {
    const char* start = cursor;
    std::memcpy(cursor, s.c_str(), s.size() + 1);
    cursor += s.size() + 1;
    return start;
  };
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const auto& k = t.kernels[i];
    auto& out = records[i];
    out.name = store(k.name);
    out.mangled_name = store(k.mangled);
    out.start_ns = k.start_ns;
    out.end_ns = k.end_ns;
    out.stream_id = k.stream_id;
    out.correlation_id = k.correlation_id;
    out.device_id = k.device_id;
    out.context_id = k.context_id;
    for (int d = 0; d < 3; ++d) {
      out.grid[d] = k.grid[d];
      out.block[d] = k.block[d];
    }
    out.registers_per_thread = k.registers_per_thread;
    out.static_shared_bytes = k.static_shared_bytes;
    out.dynamic_shared_bytes = k.dynamic_shared_bytes;
  }
  r.kernels = records;
  r.count = t.kernels.size();
  r.storage = text;
  r.timed_stream_id = t.timed_stream_id;
  r.dropped_records = t.dropped_records;
  r.begin_ns = t.begin_ns;
  r.end_ns = t.end_ns;
}

} // namespace

extern "C" {

int32_t kj_cuda_plugin_abi(void) {
  return KJ_CUDA_PLUGIN_ABI;
}

int kj_cuda_device_info(int32_t device, kj_cuda_device_result* info, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(info, "info");
    *info = kj_cuda_device_result{};
    bind_context(device);
    const CUdevice dev = context_device();
    const auto attribute = [dev](CUdevice_attribute a) {
      int value = 0;
      KJ_CU(cuDeviceGetAttribute, &value, a, dev);
      return value;
    };
    info->ordinal = static_cast<int32_t>(dev);
    KJ_CU(cuDeviceGetName, info->name, static_cast<int>(sizeof info->name), dev);
    KJ_CU(cuDeviceGetPCIBusId, info->pci_bus_id, static_cast<int>(sizeof info->pci_bus_id), dev);
    info->cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    info->cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    info->sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info->l2_bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    info->persisting_l2_max_bytes = attribute(CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE);
    std::size_t total = 0;
    KJ_CU(cuDeviceTotalMem, &total, dev);
    info->total_memory_bytes = static_cast<int64_t>(total);
    KJ_CU(cuDriverGetVersion, &info->driver_version);
    info->built_cuda_version = CUDA_VERSION;
    info->cupti_api_version = cupti_api_version();
    info->has_cupti = cupti_available() ? 1 : 0;
    info->has_nvml = nvml_available() ? 1 : 0;
    info->default_flush_bytes = l2_flusher::default_bytes(dev);
    info->memory_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    info->memory_bus_bits = attribute(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    info->sm_clock_khz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    info->can_share_fd = can_share_fd(device) ? 1 : 0;
  });
}

void kj_cuda_measure_params_init(kj_cuda_measure_params* params) {
  if (params == nullptr) return;
  const kj::timing::measure_params m;
  *params = kj_cuda_measure_params{};
  params->stream = 0;
  params->device = -1;
  params->flush_l2 = 1;
  params->flush_bytes = 0;
  params->warmup_min_calls = m.warmup_min_calls;
  params->warmup_min_ms = m.warmup_min_ms;
  params->warmup_max_calls = m.warmup_max_calls;
  params->max_wall_ms = m.max_wall_ms;
  params->min_samples = m.stopping.min_samples;
  params->min_time_ms = m.stopping.min_time_ms;
  params->target_rel_ci = m.stopping.target_rel_ci;
  params->max_time_ms = m.stopping.max_time_ms;
  params->max_samples = m.stopping.max_samples;
  params->confidence = m.stopping.confidence;
}

void kj_cuda_kernelbench_params_init(kj_cuda_kernelbench_params* params) {
  if (params == nullptr) return;
  const kernelbench_params k;
  *params = kj_cuda_kernelbench_params{};
  params->stream = 0;
  params->device = -1;
  params->warmup = k.warmup;
  params->trials = k.trials;
  params->discard_first = k.discard_first;
  params->flush_bytes = k.flush_bytes;
  params->after_warmup = nullptr;
  params->after_warmup_user = nullptr;
}

int kj_cuda_measure(const kj_cuda_measure_params* params, kj_cuda_callback callback, void* user,
                    kj_cuda_measure_result* result, kj_cuda_error* error) {
  if (result != nullptr) *result = kj_cuda_measure_result{};
  return guarded(error, [&] {
    require(params, "params");
    require(result, "result");
    if (callback == nullptr)
      throw std::invalid_argument("callback must not be NULL (kj_cuda_timer_floor times nothing)");
    const std::size_t flush_bytes = prepare(*params);
    std::function<void()> before;
    if (params->before_sample != nullptr)
      before = wrap(params->before_sample, params->before_sample_user, "before_sample callback");
    const auto m = measure_events(to_stream(params->stream), wrap(callback, user, "callback"),
                                  to_measure_params(*params), flush_bytes, std::move(before));
    fill_result(m, *result);
  });
}

int kj_cuda_timer_floor(const kj_cuda_measure_params* params, kj_cuda_measure_result* result,
                        kj_cuda_error* error) {
  if (result != nullptr) *result = kj_cuda_measure_result{};
  return guarded(error, [&] {
    require(params, "params");
    require(result, "result");
    const std::size_t flush_bytes = prepare(*params);
    fill_result(measure_timer_floor(to_stream(params->stream), to_measure_params(*params), flush_bytes),
                *result);
  });
}

int kj_cuda_measure_kernelbench(const kj_cuda_kernelbench_params* params, kj_cuda_callback callback,
                                void* user, kj_cuda_measure_result* result, kj_cuda_error* error) {
  if (result != nullptr) *result = kj_cuda_measure_result{};
  return guarded(error, [&] {
    require(params, "params");
    require(result, "result");
    if (callback == nullptr) throw std::invalid_argument("callback must not be NULL");
    const CUcontext context = bind_context(params->device);
    check_stream(to_stream(params->stream), context);
    kernelbench_params k;
    k.warmup = params->warmup;
    k.trials = params->trials;
    k.discard_first = params->discard_first;
    k.flush_bytes = params->flush_bytes;
    if (params->after_warmup != nullptr) {
      k.after_warmup = wrap(params->after_warmup, params->after_warmup_user, "after_warmup callback");
    }
    fill_result(measure_kernelbench(to_stream(params->stream), wrap(callback, user, "callback"), k), *result);
  });
}

void kj_cuda_measure_result_free(kj_cuda_measure_result* result) {
  if (result == nullptr) return;
  std::free(result->event_ms);
  std::free(result->host_ms);
  result->event_ms = nullptr;
  result->host_ms = nullptr;
  result->count = 0;
}

int kj_cuda_trace_begin(uint64_t timed_stream, kj_cuda_error* error) {
  return guarded(error, [&] { trace_begin(to_stream(timed_stream)); });
}

int kj_cuda_trace_end(kj_cuda_trace_result* result, kj_cuda_error* error) {
  if (result != nullptr) *result = kj_cuda_trace_result{};
  return guarded(error, [&] {
    require(result, "result");
    auto t = trace_end();
    fill_trace(t, *result);
  });
}

void kj_cuda_trace_result_free(kj_cuda_trace_result* result) {
  if (result == nullptr) return;
  std::free(result->kernels);
  std::free(result->storage);
  result->kernels = nullptr;
  result->storage = nullptr;
  result->count = 0;
}

int kj_cuda_nvml_snapshot(int32_t device, kj_cuda_nvml_result* snapshot, kj_cuda_error* error) {
  return kj_cuda_nvml_snapshot_excluding(device, nullptr, 0, snapshot, error);
}

int kj_cuda_nvml_snapshot_excluding(int32_t device, const uint32_t* pids, int32_t count,
                                    kj_cuda_nvml_result* snapshot, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(snapshot, "snapshot");
    if (count > 0) require(pids, "pids");
    if (!nvml_available()) take_nvml_snapshot(0, {}); // throws "unavailable" before touching the driver
    bind_context(device);
    *snapshot = take_nvml_snapshot(context_device(), std::set<unsigned int>(pids, pids + std::max(0, count)));
  });
}

int kj_cuda_sampler_create(uint64_t stream, uint64_t flush_bytes, uint64_t* sampler,
                           uint64_t* flush_bytes_used, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(sampler, "sampler");
    bind_context(-1);
    const std::size_t bytes = flush_bytes > 0 ? flush_bytes : l2_flusher::default_bytes(context_device());
    auto* subject = new cuda_event_subject(to_stream(stream), [] {}, bytes);
    *sampler = reinterpret_cast<uint64_t>(subject);
    if (flush_bytes_used) *flush_bytes_used = subject->flush_bytes();
  });
}

int kj_cuda_sampler_flush(uint64_t sampler, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(reinterpret_cast<void*>(sampler), "sampler");
    reinterpret_cast<cuda_event_subject*>(sampler)->flush();
  });
}

int kj_cuda_sampler_start(uint64_t sampler, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(reinterpret_cast<void*>(sampler), "sampler");
    reinterpret_cast<cuda_event_subject*>(sampler)->start();
  });
}

int kj_cuda_sampler_stop(uint64_t sampler, double* event_ms, double* host_ms, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(reinterpret_cast<void*>(sampler), "sampler");
    require(event_ms, "event_ms");
    auto* subject = reinterpret_cast<cuda_event_subject*>(sampler);
    *event_ms = subject->stop_ms();
    if (host_ms) *host_ms = subject->host_ms().back();
  });
}

int kj_cuda_sampler_destroy(uint64_t sampler, kj_cuda_error* error) {
  return guarded(error, [&] { delete reinterpret_cast<cuda_event_subject*>(sampler); });
}

} // extern "C"
