// Implements the plugin loader: dlopen/dlsym, ABI check, callback trampolines and C-to-C++ result conversion
// (device memory, IPC, streams and samplers: plugin_loader_memory.cpp).
#include "cuda/plugin_loader.hpp"

#include "cuda/plugin_functions.hpp"

#include <algorithm>
#include <cstdlib>
#include <dlfcn.h>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <initializer_list>

#ifndef KJ_CUDA_PLUGIN_BUILD_PATH
#define KJ_CUDA_PLUGIN_BUILD_PATH ""
#endif

namespace kj::cuda {

namespace {

namespace fs = std::filesystem;

std::string load_failure_text(const std::string& path, const std::string& reason) {
  std::string hint;
  if (reason.find("libcuda") != std::string::npos || reason.find("libnvidia-ml") != std::string::npos) {
    hint = "it needs the NVIDIA driver, which this machine does not have; use --device cpu here";
  } else if (reason.find("libcupti") != std::string::npos) {
    hint = "it needs CUPTI from the CUDA toolkit (libcupti.so); add the toolkit's lib64 to LD_LIBRARY_PATH";
  } else if (!fs::exists(path) && path.find('/') != std::string::npos) {
    hint =
        "the file does not exist: kerneljudge was built without the CUDA toolkit, or the plugin was moved; "
        "set KJ_CUDA_PLUGIN to its path";
  } else {
    hint = "set KJ_CUDA_PLUGIN to the path of libkj_cuda.so";
  }
  return fmt::format("the CUDA timing plugin could not be loaded from '{}': {} ({})", path, reason, hint);
}

template <class F>
void bind(void* handle, const std::string& path, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(handle, name));
  if (out == nullptr) {
    throw plugin_error(
        KJ_CUDA_UNAVAILABLE,
        fmt::format("the CUDA timing plugin '{}' has no symbol {}: it is from another version of "
                    "kerneljudge; rebuild it",
                    path, name));
  }
}

// Carries a C++ callable through the C ABI; an exception it throws is kept and rethrown after the call.
struct callback_slot {
  const std::function<void()>* function = nullptr;
  std::exception_ptr error;
};

int kj_cuda_trampoline(void* user) {
  auto* slot = static_cast<callback_slot*>(user);
  try {
    (*slot->function)();
    return 0;
  } catch (...) {
    slot->error = std::current_exception();
    return 1;
  }
}

void throw_on_error(int status, const kj_cuda_error& error,
                    std::initializer_list<const callback_slot*> slots = {}) {
  if (status == KJ_CUDA_OK) return;
  if (status == KJ_CUDA_CALLBACK_FAILED) {
    for (const auto* slot : slots) {
      if (slot != nullptr && slot->error) std::rethrow_exception(slot->error);
    }
  }
  throw_status(status, error);
}

// Owns a C result until converted; frees it through the plugin whatever happens.
template <class Result, class Free>
class result_guard {
public:
  explicit result_guard(Free free) : m_free(free) {}
  ~result_guard() { m_free(&m_result); }
  result_guard(const result_guard&) = delete;
  result_guard& operator=(const result_guard&) = delete;
  Result* get() { return &m_result; }
  const Result& operator*() const { return m_result; }

private:
  Result m_result{};
  Free m_free;
};

cuda_measurement to_measurement(const kj_cuda_measure_result& r, const timing::stopping_params& stopping) {
  cuda_measurement m;
  m.events.samples_ms.assign(r.event_ms, r.event_ms + r.count);
  m.host_ms.assign(r.host_ms, r.host_ms + r.count);
  m.events.stop_reason = r.stop_reason;
  m.events.warmup_calls = r.warmup_calls;
  m.events.warmup_ms = r.warmup_ms;
  m.events.params = stopping;
  m.flush_bytes = r.flush_bytes;
  if (r.count > 0) {
    m.events.stats = timing::summarize(m.events.samples_ms, stopping.confidence);
    m.host_stats = timing::summarize(m.host_ms, stopping.confidence);
  }
  return m;
}

} // namespace

std::string plugin::default_path() {
  if (const char* env = std::getenv("KJ_CUDA_PLUGIN"); env != nullptr && *env != '\0') return env;
  const std::string built = KJ_CUDA_PLUGIN_BUILD_PATH;
  std::error_code ec;
  if (!built.empty() && fs::exists(built, ec)) return built;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path beside = exe.parent_path() / "libkj_cuda.so";
    if (fs::exists(beside, ec)) return beside.string();
  }
  return built.empty() ? "libkj_cuda.so" : built;
}

plugin::plugin(const std::string& path) : m_path(path), m_fn(std::make_unique<functions>()) {
  // RTLD_NODELETE: CUPTI may still deliver a buffer into the plugin after this object is gone.
  m_handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (m_handle == nullptr) {
    const char* reason = dlerror();
    throw plugin_error(KJ_CUDA_UNAVAILABLE,
                       load_failure_text(path, reason ? reason : "unknown dlopen error"));
  }
  try {
    bind(m_handle, path, "kj_cuda_plugin_abi", m_fn->abi);
    if (const int abi = m_fn->abi(); abi != KJ_CUDA_PLUGIN_ABI)
      throw plugin_error(KJ_CUDA_UNAVAILABLE,
                         fmt::format("the CUDA timing plugin '{}' has ABI version {}, this "
                                     "kerneljudge needs {}; rebuild it",
                                     path, abi, KJ_CUDA_PLUGIN_ABI));
#define KJ_PLUGIN_BIND(name, member) bind(m_handle, path, "kj_cuda_" #name, m_fn->member);
    KJ_PLUGIN_FUNCTIONS(KJ_PLUGIN_BIND)
#undef KJ_PLUGIN_BIND
  } catch (...) {
    dlclose(m_handle);
    throw;
  }
}

plugin::~plugin() {
  if (m_handle != nullptr) dlclose(m_handle); // a no-op unload (RTLD_NODELETE); balances the reference count
}

device_info plugin::device(int device) const {
  kj_cuda_device_result c{};
  kj_cuda_error error{};
  throw_on_error(m_fn->device_info(device, &c, &error), error);
  device_info d;
  d.ordinal = c.ordinal;
  d.name = c.name;
  d.pci_bus_id = c.pci_bus_id;
  d.cc_major = c.cc_major;
  d.cc_minor = c.cc_minor;
  d.sm_count = c.sm_count;
  d.l2_bytes = c.l2_bytes;
  d.persisting_l2_max_bytes = c.persisting_l2_max_bytes;
  d.total_memory_bytes = c.total_memory_bytes;
  d.driver_version = c.driver_version;
  d.built_cuda_version = c.built_cuda_version;
  d.cupti_api_version = c.cupti_api_version;
  d.has_cupti = c.has_cupti != 0;
  d.has_nvml = c.has_nvml != 0;
  d.default_flush_bytes = c.default_flush_bytes;
  d.memory_clock_khz = c.memory_clock_khz;
  d.memory_bus_bits = c.memory_bus_bits;
  d.sm_clock_khz = c.sm_clock_khz;
  d.can_share_fd = c.can_share_fd != 0;
  return d;
}

namespace {

kj_cuda_measure_params to_c_params(const plugin::functions& fn, const measure_options& o) {
  kj_cuda_measure_params p{};
  fn.measure_params_init(&p);
  p.stream = o.stream;
  p.device = o.device;
  p.flush_l2 = o.flush_l2 ? 1 : 0;
  p.flush_bytes = o.flush_bytes;
  p.warmup_min_calls = o.params.warmup_min_calls;
  p.warmup_min_ms = o.params.warmup_min_ms;
  p.warmup_max_calls = o.params.warmup_max_calls;
  p.max_wall_ms = o.params.max_wall_ms;
  p.min_samples = o.params.stopping.min_samples;
  p.min_time_ms = o.params.stopping.min_time_ms;
  p.target_rel_ci = o.params.stopping.target_rel_ci;
  p.max_time_ms = o.params.stopping.max_time_ms;
  p.max_samples = o.params.stopping.max_samples;
  p.confidence = o.params.stopping.confidence;
  return p;
}

} // namespace

cuda_measurement plugin::measure(const std::function<void()>& call, const measure_options& options) const {
  if (!call) throw std::invalid_argument("plugin::measure: the callable is empty");
  auto params = to_c_params(*m_fn, options);
  callback_slot slot{&call, nullptr};
  callback_slot before{&options.before_sample, nullptr};
  if (options.before_sample) {
    params.before_sample = kj_cuda_trampoline;
    params.before_sample_user = &before;
  }
  result_guard<kj_cuda_measure_result, decltype(m_fn->measure_result_free)> result(m_fn->measure_result_free);
  kj_cuda_error error{};
  throw_on_error(m_fn->measure(&params, kj_cuda_trampoline, &slot, result.get(), &error), error,
                 {&slot, &before});
  return to_measurement(*result, options.params.stopping);
}

cuda_measurement plugin::timer_floor(const measure_options& options) const {
  const auto params = to_c_params(*m_fn, options);
  result_guard<kj_cuda_measure_result, decltype(m_fn->measure_result_free)> result(m_fn->measure_result_free);
  kj_cuda_error error{};
  throw_on_error(m_fn->timer_floor(&params, result.get(), &error), error);
  return to_measurement(*result, options.params.stopping);
}

cuda_measurement plugin::kernelbench(const std::function<void()>& call,
                                     const kernelbench_options& options) const {
  if (!call) throw std::invalid_argument("plugin::kernelbench: the callable is empty");
  kj_cuda_kernelbench_params params{};
  m_fn->kernelbench_params_init(&params);
  params.stream = options.stream;
  params.device = options.device;
  params.warmup = options.warmup;
  params.trials = options.trials;
  params.discard_first = options.discard_first;
  params.flush_bytes = options.flush_bytes;
  callback_slot slot{&call, nullptr};
  callback_slot after{&options.after_warmup, nullptr};
  if (options.after_warmup) {
    params.after_warmup = kj_cuda_trampoline;
    params.after_warmup_user = &after;
  }
  result_guard<kj_cuda_measure_result, decltype(m_fn->measure_result_free)> result(m_fn->measure_result_free);
  kj_cuda_error error{};
  throw_on_error(m_fn->measure_kernelbench(&params, kj_cuda_trampoline, &slot, result.get(), &error), error,
                 {&slot, &after});
  timing::stopping_params stopping;
  stopping.min_samples = options.trials;
  stopping.max_samples = options.trials;
  return to_measurement(*result, stopping);
}

void plugin::trace_begin(std::uint64_t timed_stream) const {
  kj_cuda_error error{};
  throw_on_error(m_fn->trace_begin(timed_stream, &error), error);
}

kernel_trace plugin::trace_end() const {
  result_guard<kj_cuda_trace_result, decltype(m_fn->trace_result_free)> result(m_fn->trace_result_free);
  kj_cuda_error error{};
  throw_on_error(m_fn->trace_end(result.get(), &error), error);
  const auto& r = *result;
  kernel_trace t;
  t.timed_stream_id = r.timed_stream_id;
  t.dropped_records = r.dropped_records;
  t.begin_ns = r.begin_ns;
  t.end_ns = r.end_ns;
  t.kernels.reserve(r.count);
  for (std::uint64_t i = 0; i < r.count; ++i) {
    const auto& k = r.kernels[i];
    timing::kernel_record out;
    out.name = k.name;
    out.stream_id = k.stream_id;
    out.start_ns = k.start_ns;
    out.end_ns = k.end_ns;
    out.correlation_id = k.correlation_id;
    std::copy(k.grid, k.grid + 3, out.grid);
    std::copy(k.block, k.block + 3, out.block);
    t.kernels.push_back(std::move(out));
  }
  std::stable_sort(t.kernels.begin(), t.kernels.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  return t;
}

nvml_snapshot plugin::nvml(int device) const {
  return nvml_excluding({}, device);
}

nvml_snapshot plugin::nvml_excluding(const std::vector<std::uint32_t>& pids, int device) const {
  nvml_snapshot s;
  kj_cuda_error error{};
  const int status = m_fn->nvml_snapshot_excluding(device, pids.data(),
                                                   static_cast<std::int32_t>(pids.size()), &s.values, &error);
  if (status == KJ_CUDA_UNAVAILABLE) {
    s.unavailable_reason = error.message;
    return s;
  }
  throw_on_error(status, error);
  s.available = true;
  return s;
}

} // namespace kj::cuda
