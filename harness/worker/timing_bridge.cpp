// Implements time_callable on the timing engine's cold-measurement loop with the host clock.
#include "harness/worker/timing_bridge.hpp"

#include "harness/timing/measure.hpp"

#include <algorithm>

namespace kj::worker {
namespace {

// The host clock around a call followed by a device synchronization, so queued GPU work is inside the sample.
class synced_host_subject final : public timing::timed_subject {
public:
  synced_host_subject(const std::function<void()>& call, const std::function<void()>& sync)
      : m_call(call), m_sync(sync) {}
  void flush() override { m_sync(); }
  void start() override { m_start = timing::host_clock::now(); }
  void call() override {
    m_call();
    m_sync();
  }
  double stop_ms() override { return timing::elapsed_ms(m_start, timing::host_clock::now()); }

private:
  const std::function<void()>& m_call;
  const std::function<void()>& m_sync;
  timing::host_clock::time_point m_start;
};

timing::measure_params to_params(const timing_spec& spec) {
  timing::measure_params params;
  params.warmup_min_calls = static_cast<std::size_t>(spec.warmup_min_calls);
  params.warmup_min_ms = spec.warmup_min_ms;
  params.stopping.min_samples = static_cast<std::size_t>(spec.min_samples);
  params.stopping.min_time_ms = std::min(spec.min_time_ms, spec.max_time_ms);
  params.stopping.max_time_ms = spec.max_time_ms;
  params.stopping.max_samples = static_cast<std::size_t>(spec.max_samples);
  params.stopping.target_rel_ci = spec.target_rel_ci;
  params.max_wall_ms = std::max(15000.0, 3 * spec.max_time_ms);
  return params;
}

} // namespace

timing_result time_callable(const std::function<void()>& call, const std::function<void()>& sync,
                            const timing_spec& spec, bool cuda) {
  timing::measurement m;
  timing_result result;
  if (cuda) {
    synced_host_subject subject(call, sync);
    m = timing::measure_cold(subject, to_params(spec));
    result.clock = "host+sync";
  } else {
    timing::host_subject subject(call);
    m = timing::measure_cold(subject, to_params(spec));
    result.clock = "host";
  }
  result.method = "host-median";
  result.params = spec;
  result.params["warmup_calls"] = m.warmup_calls;
  result.stop_reason = m.stop_reason;
  result.samples_ms = std::move(m.samples_ms);
  return result;
}

} // namespace kj::worker
