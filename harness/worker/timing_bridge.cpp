// Implements time_callable and trace_callable on the timing engine: the cold-measurement loop with the host
// clock on the CPU, and the CUDA timing plugin (events, L2 flush, CUPTI) on the GPU.
#include "harness/worker/timing_bridge.hpp"

#include "harness/cuda/plugin_loader.hpp"
#include "harness/timing/measure.hpp"
#include "harness/timing/trace_summary.hpp"

#include <algorithm>
#include <memory>
#include <optional>

namespace kj::worker {
namespace {

// The host clock around a call followed by a device synchronization: the fallback when the plugin is missing.
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

// One plugin per worker process, loaded on first use; the error text when it cannot be.
const cuda::plugin* cuda_plugin(std::string& error) {
  static std::unique_ptr<cuda::plugin> plugin;
  static std::string load_error;
  static bool tried = false;
  if (!tried) {
    tried = true;
    try {
      plugin = std::make_unique<cuda::plugin>();
    } catch (const std::exception& e) {
      load_error = e.what();
    }
  }
  error = load_error;
  return plugin.get();
}

} // namespace

timing_result time_callable(const std::function<void()>& call, const device_context& device,
                            const timing_spec& spec) {
  timing_result result;
  result.params = spec;
  timing::measurement m;
  if (!device.cuda) {
    timing::host_subject subject(call);
    m = timing::measure_cold(subject, to_params(spec));
    result.method = "robust";
    result.clock = "host";
  } else {
    std::string error;
    const cuda::plugin* plugin = cuda_plugin(error);
    if (plugin) {
      try {
        cuda::measure_options options;
        options.stream = device.stream;
        options.params = to_params(spec);
        cuda::cuda_measurement cm = plugin->measure(call, options);
        m = std::move(cm.events);
        result.method = "robust";
        result.clock = "cuda-event";
        result.params["host_ms"] = cm.host_ms;
        result.params["l2_flush_bytes"] = cm.flush_bytes;
      } catch (const cuda::plugin_error& e) { // the plugin's own failure, not the candidate's
        error = e.what();
        plugin = nullptr;
      }
    }
    if (!plugin) {
      synced_host_subject subject(call, device.sync);
      m = timing::measure_cold(subject, to_params(spec));
      result.method = "host-median";
      result.clock = "host+sync";
      result.params["cuda_plugin_error"] = error;
    }
  }
  result.params["warmup_calls"] = m.warmup_calls;
  result.stop_reason = m.stop_reason;
  result.samples_ms = std::move(m.samples_ms);
  return result;
}

nlohmann::json trace_callable(const std::function<void()>& call, const device_context& device,
                              double event_ms, int calls) {
  if (!device.cuda) return nullptr;
  std::string error;
  const cuda::plugin* plugin = cuda_plugin(error);
  if (!plugin) return {{"error", error}};
  device.sync();
  plugin->trace_begin(device.stream);
  for (int i = 0; i < calls; ++i)
    call();
  device.sync();
  const cuda::kernel_trace trace = plugin->trace_end();
  const auto summary =
      timing::summarize_trace(trace.kernels, trace.timed_stream_id, static_cast<std::size_t>(calls));
  const auto side = timing::check_side_stream(summary, event_ms);
  nlohmann::json libraries = nlohmann::json::array();
  for (const auto& l : summary.libraries)
    libraries.push_back({{"library", l.library}, {"ms", l.ms}, {"kernels", l.kernels}});
  nlohmann::json names = nlohmann::json::array();
  for (std::size_t i = 0; i < trace.kernels.size() && i < 16; ++i)
    names.push_back(trace.kernels[i].name);
  return {{"calls", calls},
          {"kernels", summary.kernels},
          {"kernels_per_call", summary.kernels_per_call},
          {"streams", summary.streams},
          {"busy_ms_per_call", summary.busy_ms_per_call},
          {"kernel_ms", summary.kernel_ms},
          {"library_share", summary.library_share},
          {"libraries", libraries},
          {"side_stream", side.flagged},
          {"side_stream_reason", side.reason},
          {"dropped_records", trace.dropped_records},
          {"first_kernels", names}};
}

} // namespace kj::worker
