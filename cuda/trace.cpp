// Implements CUPTI kernel traces with the activity API: buffer callbacks collect every kernel on every
// stream.
#include "cuda/trace.hpp"

#if KJ_HAVE_CUPTI

#include <cstdlib>
#include <cupti.h>
#include <cxxabi.h>
#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <unordered_map>
#include <utility>

// Every CUPTI call; throws kj::cuda::tool_error with file:line, the call and CUPTI's error string.
#define KJ_CUPTI(name, ...)                                                                                  \
  ::kj::cuda::check_cupti(name(__VA_ARGS__), #name "(" #__VA_ARGS__ ")", __FILE__, __LINE__)

namespace kj::cuda {
namespace {

// The fields read below sit at the same offsets in every CUpti_ActivityKernel version since 4; the newest
// version of the headers we build against is what CUPTI of the same release writes.
#if CUPTI_API_VERSION >= 130000
using kernel_activity = CUpti_ActivityKernel10;
#else
using kernel_activity = CUpti_ActivityKernel9;
#endif

constexpr std::size_t k_buffer_bytes = std::size_t{8} << 20; // Kineto uses 4 MiB; fewer callbacks with 8
constexpr std::size_t k_buffer_alignment = 8;                // CUPTI's requirement for activity buffers

void check_cupti(CUptiResult result, const char* call, const char* file, int line) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS) text = nullptr;
  throw tool_error(fmt::format("{}:{}: {} failed: CUPTI error {} ({})", file, line, call,
                               static_cast<int>(result), text ? text : "no description"));
}

// Enables one activity kind for as long as it lives (the RAII side of a CUPTI "subscription").
class activity_kind_enabled {
public:
  explicit activity_kind_enabled(CUpti_ActivityKind kind) : m_kind(kind) {
    KJ_CUPTI(cuptiActivityEnable, kind);
  }
  ~activity_kind_enabled() { cuptiActivityDisable(m_kind); }
  activity_kind_enabled(const activity_kind_enabled&) = delete;
  activity_kind_enabled& operator=(const activity_kind_enabled&) = delete;

private:
  CUpti_ActivityKind m_kind;
};

// Shared with CUPTI's buffer-completion thread; never destroyed, so a late callback at exit finds it alive.
// session_mutex serializes begin/end (and enabling/disabling); data_mutex guards what the callbacks touch,
// and is never held across a CUPTI call that might deliver buffers on the calling thread.
struct trace_state {
  std::mutex session_mutex;
  std::optional<activity_kind_enabled> enabled;
  std::uint32_t timed_stream_id = k_unknown_stream;
  std::uint64_t begin_ns = 0;

  std::mutex data_mutex;
  std::vector<traced_kernel> kernels;
  std::uint64_t dropped = 0;
};

trace_state& state() {
  static auto* s = new trace_state;
  return *s;
}

traced_kernel to_kernel(const kernel_activity& k) {
  traced_kernel out;
  out.mangled = k.name ? k.name : "<unnamed>";
  out.start_ns = k.start;
  out.end_ns = k.end;
  out.stream_id = k.streamId;
  out.correlation_id = k.correlationId;
  out.device_id = k.deviceId;
  out.context_id = k.contextId;
  out.grid[0] = k.gridX;
  out.grid[1] = k.gridY;
  out.grid[2] = k.gridZ;
  out.block[0] = k.blockX;
  out.block[1] = k.blockY;
  out.block[2] = k.blockZ;
  out.registers_per_thread = k.registersPerThread;
  out.static_shared_bytes = k.staticSharedMemory;
  out.dynamic_shared_bytes = k.dynamicSharedMemory;
  return out;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(k_buffer_alignment, k_buffer_bytes));
  *size = *buffer != nullptr ? k_buffer_bytes : 0; // no buffer: CUPTI drops records and counts them
  *max_records = 0;                                // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  std::vector<traced_kernel> batch;
  std::uint64_t lost = 0;
  try {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
        batch.push_back(to_kernel(*reinterpret_cast<const kernel_activity*>(record)));
      }
    }
  } catch (const std::bad_alloc&) {
    lost = 1; // nothing may escape into CUPTI; the trace is marked incomplete instead
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) != CUPTI_SUCCESS) dropped = 0;
  std::free(buffer);
  auto& s = state();
  const std::lock_guard lock(s.data_mutex);
  s.dropped += dropped + lost;
  try {
    s.kernels.insert(s.kernels.end(), std::make_move_iterator(batch.begin()),
                     std::make_move_iterator(batch.end()));
  } catch (const std::bad_alloc&) {
    s.dropped += batch.size();
  }
}

std::string demangle(const std::string& mangled) {
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : mangled;
}

void demangle_all(std::vector<traced_kernel>& kernels) {
  std::unordered_map<std::string, std::string> cache;
  for (auto& k : kernels) {
    auto [it, added] = cache.try_emplace(k.mangled);
    if (added) it->second = demangle(k.mangled);
    k.name = it->second;
  }
}

std::uint64_t timestamp() {
  std::uint64_t ns = 0;
  KJ_CUPTI(cuptiGetTimestamp, &ns);
  return ns;
}

} // namespace

bool cupti_available() {
  return true;
}
int cupti_api_version() {
  return CUPTI_API_VERSION;
}

void trace_begin(CUstream timed_stream) {
  const CUcontext context = bind_context(-1);
  check_stream(timed_stream, context);
  auto& s = state();
  const std::lock_guard session(s.session_mutex);
  if (s.enabled) throw state_error("a kernel trace is already running: end it with kj_cuda_trace_end first");
  std::uint32_t stream_id = k_unknown_stream;
  if (cuptiGetStreamIdEx(context, timed_stream, 0, &stream_id) != CUPTI_SUCCESS) stream_id = k_unknown_stream;
  KJ_CUPTI(cuptiActivityRegisterCallbacks, buffer_requested, buffer_completed);
  KJ_CU(cuCtxSynchronize); // what ran before the trace is not part of it
  {
    const std::lock_guard data(s.data_mutex);
    s.kernels.clear();
    s.dropped = 0;
  }
  s.timed_stream_id = stream_id;
  s.begin_ns = timestamp();
  s.enabled.emplace(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

trace_data trace_end() {
  auto& s = state();
  const std::lock_guard session(s.session_mutex);
  if (!s.enabled) throw state_error("kj_cuda_trace_end without a running trace (kj_cuda_trace_begin)");
  // Whatever fails below, the activity kind is disabled and the next trace may begin.
  struct disable_on_exit {
    std::optional<activity_kind_enabled>& enabled;
    ~disable_on_exit() { enabled.reset(); }
  } guard{s.enabled};

  trace_data result;
  KJ_CU(cuCtxSynchronize); // every kernel of the traced calls has finished and has a record
  result.end_ns = timestamp();
  KJ_CUPTI(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  s.enabled.reset();
  KJ_CUPTI(cuptiActivityFlushAll, CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // records completed while disabling
  {
    const std::lock_guard data(s.data_mutex);
    result.kernels = std::exchange(s.kernels, {});
    result.dropped_records = std::exchange(s.dropped, 0);
  }
  result.timed_stream_id = s.timed_stream_id;
  result.begin_ns = s.begin_ns;
  demangle_all(result.kernels);
  return result;
}

} // namespace kj::cuda

#else // without CUPTI

namespace kj::cuda {

bool cupti_available() {
  return false;
}
int cupti_api_version() {
  return 0;
}

void trace_begin(CUstream) {
  throw unavailable_error(
      "kernel traces need CUPTI, and this plugin was built without it (no CUDA::cupti found)");
}

trace_data trace_end() {
  throw unavailable_error(
      "kernel traces need CUPTI, and this plugin was built without it (no CUDA::cupti found)");
}

} // namespace kj::cuda

#endif
