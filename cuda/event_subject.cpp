// Implements CUDA-event timing on the shared cold-measurement loop and KernelBench's fixed protocol.
#include "cuda/event_subject.hpp"

#include "timing/statistics.hpp"

#include <algorithm>
#include <utility>

namespace kj::cuda {
namespace {

double elapsed_event_ms(const event& start, const event& end) {
  float ms = 0;
  KJ_CU(cuEventElapsedTime, &ms, start.get(), end.get());
  return ms;
}

} // namespace

void reset_persisting_l2(CUstream stream) noexcept {
  // Best effort (MIG and MPS refuse some of it): no persisting carve-out, no access-policy window on the
  // timed stream, and every persisting line back to normal, so that the memset flush that follows evicts it.
  const driver_api& d = loaded_driver();
  (void)d.fn_cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
  CUstreamAttrValue none{};
  (void)d.fn_cuStreamSetAttribute(stream, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &none);
  (void)d.fn_cuCtxResetPersistingL2Cache();
}

std::size_t l2_flusher::default_bytes(CUdevice device) {
  int l2 = 0;
  KJ_CU(cuDeviceGetAttribute, &l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device);
  constexpr std::size_t k_min_l2 = std::size_t{1} << 20;
  // Three times L2: the equivalent of inputs rotated over 3 x L2 (a working set smaller than L2 is evicted
  // whatever replacement hints its lines carried, once persisting lines are made normal).
  return 3 * std::max(static_cast<std::size_t>(l2), k_min_l2);
}

void l2_flusher::enqueue(CUstream stream) {
  m_value = static_cast<unsigned char>(m_value + 1);
  KJ_CU(cuMemsetD8Async, m_buffer.get(), m_value, m_buffer.bytes(), stream);
}

cuda_event_subject::cuda_event_subject(CUstream stream, std::function<void()> call, std::size_t flush_bytes,
                                       std::function<void()> prepare)
    : m_stream(stream), m_call(std::move(call)), m_prepare(std::move(prepare)) {
  if (!m_call) throw std::invalid_argument("cuda_event_subject: the callback is empty");
  if (flush_bytes > 0) m_flusher.emplace(flush_bytes);
}

void cuda_event_subject::flush() {
  if (!m_flusher) return;
  reset_persisting_l2(m_stream); // a window a candidate set in its last call must not outlive the flush
  m_flusher->enqueue(m_stream);
  // Waited for here, so the host clock that start() reads next does not include the flush either.
  KJ_CU(cuStreamSynchronize, m_stream);
}

void cuda_event_subject::start() {
  m_host_start = timing::host_clock::now();
  KJ_CU(cuEventRecord, m_start.get(), m_stream);
}

double cuda_event_subject::stop_ms() {
  // Device-wide first: work the callback queued on any other stream must finish inside the sample, so a
  // side-stream kernel cannot make a forward look fast. The end event is recorded after it, on the timed
  // stream; the host's wake-up latency lands in every subject alike (the empty-forward floor measures it).
  KJ_CU(cuCtxSynchronize);
  m_host_ms.push_back(timing::elapsed_ms(m_host_start, timing::host_clock::now()));
  KJ_CU(cuEventRecord, m_end.get(), m_stream);
  KJ_CU(cuStreamSynchronize, m_stream);
  return elapsed_event_ms(m_start, m_end);
}

event_measurement measure_events(CUstream stream, std::function<void()> call,
                                 const timing::measure_params& params, std::size_t flush_bytes,
                                 std::function<void()> prepare) {
  cuda_event_subject subject(stream, std::move(call), flush_bytes, std::move(prepare));
  // Work queued before the measurement (the caller's set-up) must not land in the first warmup sample.
  KJ_CU(cuCtxSynchronize);
  event_measurement result;
  result.events = timing::measure_cold(subject, params);
  const auto& host = subject.host_ms();
  const std::size_t n = result.events.samples_ms.size();
  result.host_ms.assign(host.end() - static_cast<std::ptrdiff_t>(n), host.end());
  result.flush_bytes = subject.flush_bytes();
  return result;
}

event_measurement measure_timer_floor(CUstream stream, const timing::measure_params& params,
                                      std::size_t flush_bytes) {
  return measure_events(
      stream, [] {}, params, flush_bytes);
}

event_measurement measure_kernelbench(CUstream stream, const std::function<void()>& call,
                                      const kernelbench_params& params) {
  if (!call) throw std::invalid_argument("measure_kernelbench: the callback is empty");
  if (params.trials == 0) throw std::invalid_argument("measure_kernelbench: trials must be at least 1");
  if (params.flush_bytes == 0)
    throw std::invalid_argument("measure_kernelbench: flush_bytes must be positive");
  l2_flusher flusher(params.flush_bytes);
  event start;
  event end;
  event_measurement result;

  for (unsigned i = 0; i < params.warmup; ++i) {
    call();
    KJ_CU(cuCtxSynchronize);
  }
  if (params.after_warmup) params.after_warmup();

  for (unsigned trial = 0; trial < params.trials + params.discard_first; ++trial) {
    KJ_CU(cuCtxSynchronize);
    reset_persisting_l2(stream);
    flusher.enqueue(stream); // KernelBench's dummy.fill_(42), queued on the same stream, not waited for
    const auto host_start = timing::host_clock::now();
    KJ_CU(cuEventRecord, start.get(), stream);
    call();
    KJ_CU(cuEventRecord, end.get(), stream);
    KJ_CU(cuCtxSynchronize);
    const double host_ms = timing::elapsed_ms(host_start, timing::host_clock::now());
    const double event_ms = elapsed_event_ms(start, end);
    if (trial < params.discard_first) continue;
    result.events.samples_ms.push_back(event_ms);
    result.host_ms.push_back(host_ms);
  }
  result.events.stats = timing::summarize(result.events.samples_ms);
  result.events.stop_reason = "fixed_trials";
  result.events.warmup_calls = params.warmup;
  result.events.params.min_samples = params.trials;
  result.events.params.max_samples = params.trials;
  result.flush_bytes = flusher.bytes();
  return result;
}

} // namespace kj::cuda
