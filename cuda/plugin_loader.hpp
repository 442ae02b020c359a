// Loads the CUDA timing plugin (libkj_cuda.so) with dlopen and wraps its C ABI in C++; needs no CUDA to
// build.
#pragma once

#include "cuda/cuda_plugin.h"
#include "timing/measure.hpp"
#include "timing/statistics.hpp"
#include "timing/trace_summary.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kj::cuda {

// Loading failed, or a plugin call returned an error; status() is a kj_cuda_status (KJ_CUDA_UNAVAILABLE for a
// missing plugin or driver).
class plugin_error : public std::runtime_error {
public:
  plugin_error(int status, const std::string& message) : std::runtime_error(message), m_status(status) {}
  int status() const { return m_status; }

private:
  int m_status;
};

struct device_info {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t persisting_l2_max_bytes = 0;
  std::int64_t total_memory_bytes = 0;
  int driver_version = 0;
  int built_cuda_version = 0;
  int cupti_api_version = 0;
  bool has_cupti = false;
  bool has_nvml = false;
  std::uint64_t default_flush_bytes = 0; // 3 x L2
  std::int64_t memory_clock_khz = 0;     // peak memory clock
  int memory_bus_bits = 0;
  std::int64_t sm_clock_khz = 0;
  bool can_share_fd = false; // device memory can be shared by file descriptor (across PID namespaces)
};

// Device memory exported as a file descriptor (plugin::share_alloc): the caller sends `fd` and closes it.
struct shared_memory {
  std::uint64_t ptr = 0;
  std::uint64_t bytes = 0; // rounded up to the allocation granularity
  int fd = -1;
};

struct measure_options {
  std::uint64_t stream = 0;    // torch.cuda.current_stream().cuda_stream
  int device = -1;             // checked against the current context when >= 0
  bool flush_l2 = true;        // false: a hot measurement
  std::size_t flush_bytes = 0; // 0: 3 x L2
  timing::measure_params params{};
  std::function<void()> before_sample; // before each sample's flush (fresh inputs); may be empty
};

struct kernelbench_options {
  std::uint64_t stream = 0;
  int device = -1;
  unsigned warmup = 3;
  unsigned trials = 100;
  unsigned discard_first = 1;
  std::size_t flush_bytes = std::size_t{256} << 20;
  std::function<void()> after_warmup; // the worker's torch.cuda.empty_cache()
};

struct cuda_measurement {
  timing::measurement events;  // event samples [ms] (the headline) with their summary
  std::vector<double> host_ms; // [ms] host samples (start event to end of the device-wide sync), aligned
  timing::summary host_stats;
  std::size_t flush_bytes = 0;
};

struct kernel_trace {
  std::vector<timing::kernel_record> kernels; // sorted by start time
  std::uint32_t timed_stream_id = timing::k_unknown_stream_id;
  std::uint64_t dropped_records = 0; // non-zero: the trace is incomplete
  std::uint64_t begin_ns = 0;
  std::uint64_t end_ns = 0;
};

struct nvml_snapshot {
  bool available = false;
  std::string unavailable_reason; // why not, when !available
  kj_cuda_nvml_result values{};   // -1 where NVML could not read a value
};

// One loaded plugin. Every method binds the calling thread to its current CUDA context (torch's) and throws
// plugin_error on failure; exceptions thrown by the callbacks come back out unchanged.
class plugin {
public:
  // $KJ_CUDA_PLUGIN if set, else the build tree's libkj_cuda.so if it exists, else libkj_cuda.so next to the
  // running executable, else "libkj_cuda.so" (the loader's search path).
  static std::string default_path();

  // Throws plugin_error (KJ_CUDA_UNAVAILABLE) when the file is missing or cannot be loaded, a symbol is
  // missing or the ABI version differs. Loading does not need a GPU driver; the first call does.
  explicit plugin(const std::string& path = default_path());
  ~plugin();
  plugin(const plugin&) = delete;
  plugin& operator=(const plugin&) = delete;

  const std::string& path() const { return m_path; }

  device_info device(int device = -1) const;
  cuda_measurement measure(const std::function<void()>& call, const measure_options& options = {}) const;
  cuda_measurement timer_floor(const measure_options& options = {}) const;
  cuda_measurement kernelbench(const std::function<void()>& call,
                               const kernelbench_options& options = {}) const;
  void trace_begin(std::uint64_t timed_stream) const;
  kernel_trace trace_end() const;
  nvml_snapshot nvml(int device = -1) const; // available == false instead of throwing when NVML is absent
  // The same, not counting `pids` (a runner's processes, as this process's PID namespace sees them) as
  // others.
  nvml_snapshot nvml_excluding(const std::vector<std::uint32_t>& pids, int device = -1) const;

  std::uint64_t stream_create() const;
  void stream_destroy(std::uint64_t stream) const;
  void spin(std::uint64_t stream, std::uint64_t ns) const;

  // Device memory shared with another process (the judge's arena; see engine/worker/arena.hpp).
  std::uint64_t mem_alloc(std::uint64_t bytes, int device = -1) const;
  void mem_free(std::uint64_t ptr) const;
  std::pair<std::uint64_t, std::uint64_t> mem_info(int device = -1) const; // free, total [bytes]
  std::string ipc_handle(std::uint64_t ptr) const;                         // 64 bytes
  std::uint64_t ipc_open(const std::string& handle, int device = -1) const;
  void ipc_close(std::uint64_t ptr) const;
  // Device memory shared by file descriptor, which crosses a PID namespace (CUDA IPC handles do not).
  shared_memory share_alloc(std::uint64_t bytes, int device = -1) const;
  std::uint64_t share_import(int fd, std::uint64_t bytes, int device = -1) const; // closes fd
  void share_free(std::uint64_t ptr) const;
  void copy_sync(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) const; // to device

  struct functions;

private:
  friend class sampler;
  std::string m_path;
  void* m_handle = nullptr;
  std::unique_ptr<functions> m_fn;
};

// One timed call at a time, for a loop another process drives (the judge): flush() resets persisting L2 and
// writes the flush buffer (waited for), start() records the start event, stop() synchronizes the context and
// returns {event ms, host ms}.
class sampler {
public:
  sampler(const plugin& p, std::uint64_t stream, std::uint64_t flush_bytes = 0); // 0: 3 x L2
  ~sampler();
  sampler(const sampler&) = delete;
  sampler& operator=(const sampler&) = delete;
  void flush() const;
  void start() const;
  std::pair<double, double> stop() const;
  std::uint64_t flush_bytes() const { return m_flush_bytes; }

private:
  const plugin::functions* m_fn;
  std::uint64_t m_handle = 0;
  std::uint64_t m_flush_bytes = 0;
};

} // namespace kj::cuda
