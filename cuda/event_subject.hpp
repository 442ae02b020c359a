// CUDA-event timing: the L2 flusher, the cold-loop subject, KernelBench's protocol and the timer floor.
#pragma once

#include "cuda/resources.hpp"
#include "timing/host_clock.hpp"
#include "timing/measure.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kj::cuda {

// The caller's callback reported a failure; the caller holds the details (e.g. a Python exception).
class callback_failed : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Before every flush: the persisting-L2 carve-out set to zero, the timed stream's access-policy window reset
// and every persisting line made normal, so that nothing a candidate pinned in L2 survives into the next
// sample.
void reset_persisting_l2(CUstream stream) noexcept;

// Evicts L2 by writing a device buffer on a stream. Writes allocate lines in L2 (reads alone could leave
// lines of the previous sample's data shared), and the written value alternates so that no flush is a no-op
// rewrite.
class l2_flusher {
public:
  // 3 x CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE (at least 3 x 1 MiB when the attribute reads 0).
  static std::size_t default_bytes(CUdevice device);

  explicit l2_flusher(std::size_t bytes) : m_buffer(bytes) {}
  // Queues the write on the stream and returns; the caller decides whether to wait.
  void enqueue(CUstream stream);
  std::size_t bytes() const { return m_buffer.bytes(); }

private:
  device_buffer m_buffer;
  unsigned char m_value = 0;
};

// One sample: flush() writes the flush buffer and waits for it on the stream (so neither the events nor the
// host clock see it); start() reads the host clock and records the start event; call() runs the callback;
// stop_ms() records the end event, synchronizes the whole context (work the callback put on any stream
// finishes inside the host sample) and returns the event time. The host time of every sample, warmup
// included, is kept.
class cuda_event_subject final : public timing::timed_subject {
public:
  // flush_bytes == 0: no flush (a hot measurement).
  // prepare: called before each sample's flush (fresh inputs); may be empty.
  cuda_event_subject(CUstream stream, std::function<void()> call, std::size_t flush_bytes,
                     std::function<void()> prepare = {});

  void prepare() override {
    if (m_prepare) m_prepare();
  }
  void flush() override;
  void start() override;
  void call() override { m_call(); }
  double stop_ms() override;

  const std::vector<double>& host_ms() const { return m_host_ms; } // [ms] per sample, warmup included
  std::size_t flush_bytes() const { return m_flusher ? m_flusher->bytes() : 0; }

private:
  CUstream m_stream;
  std::function<void()> m_call;
  std::function<void()> m_prepare;
  std::optional<l2_flusher> m_flusher;
  event m_start;
  event m_end;
  timing::host_clock::time_point m_host_start;
  std::vector<double> m_host_ms;
};

struct event_measurement {
  timing::measurement events;  // event samples [ms] and their summary, warmup excluded
  std::vector<double> host_ms; // [ms] host samples, aligned with events.samples_ms
  std::size_t flush_bytes = 0;
};

// measure_cold on a cuda_event_subject.
event_measurement measure_events(CUstream stream, std::function<void()> call,
                                 const timing::measure_params& params, std::size_t flush_bytes,
                                 std::function<void()> prepare = {});

// The event time of an empty callback: what the timer reports for nothing (its floor).
event_measurement measure_timer_floor(CUstream stream, const timing::measure_params& params,
                                      std::size_t flush_bytes);

// KernelBench main's time_execution_with_cuda_event (src/kernelbench/timing.py).
struct kernelbench_params {
  unsigned warmup = 3;
  unsigned trials = 100;
  unsigned discard_first = 1;
  std::size_t flush_bytes = std::size_t{256} << 20; // torch.empty((32, 1024, 1024), dtype=torch.int64)
  std::function<void()> after_warmup;               // where KernelBench calls torch.cuda.empty_cache()
};

// Warmup: call + cuCtxSynchronize, `warmup` times; after_warmup(); then per trial: cuCtxSynchronize, flush on
// the stream (not waited for, as in KernelBench), start event, call, end event, cuCtxSynchronize. The first
// `discard_first` trials are dropped. stop_reason "fixed_trials"; warmup_ms stays 0 (warmups are not timed).
event_measurement measure_kernelbench(CUstream stream, const std::function<void()>& call,
                                      const kernelbench_params& params);

} // namespace kj::cuda
