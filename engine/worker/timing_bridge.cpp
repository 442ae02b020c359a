// Implements time_callable and trace_callable on the timing engine: the cold-measurement loop with the host
// clock on the CPU, and the CUDA timing plugin (events, L2 flush, CUPTI) on the GPU.
#include "engine/worker/timing_bridge.hpp"

#include "cuda/plugin_loader.hpp"
#include "engine/exec/timing_methods.hpp"
#include "timing/host_probe.hpp"
#include "timing/measure.hpp"
#include "timing/trace_summary.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::worker {

timing::measure_params measure_params_of(const exec::timing_spec& spec) {
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

namespace {

// The host clock around a call followed by a device synchronization: the fallback when the plugin is missing.
class synced_host_subject final : public timing::timed_subject {
public:
  synced_host_subject(const std::function<void()>& call, const std::function<void()>& sync,
                      const std::function<void()>& prepare)
      : m_call(call), m_sync(sync), m_prepare(prepare) {}
  void prepare() override {
    if (m_prepare) m_prepare();
  }
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
  const std::function<void()>& m_prepare;
  timing::host_clock::time_point m_start;
};

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

// Throttle reasons that slow the clocks (idle, application clocks and sync boost do not).
constexpr std::int64_t k_slowing_reasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

nlohmann::json nvml_json(const cuda::nvml_snapshot& s) {
  if (!s.available) return {{"available", false}, {"reason", s.unavailable_reason}};
  const auto& v = s.values;
  return {{"sm_clock_mhz", v.sm_clock_mhz},
          {"sm_clock_max_mhz", v.sm_clock_max_mhz},
          {"mem_clock_mhz", v.mem_clock_mhz},
          {"temperature_c", v.temperature_c},
          {"power_mw", v.power_mw},
          {"power_limit_mw", v.power_limit_mw},
          {"clocks_event_reasons", v.clocks_event_reasons},
          {"clocks_event_text", std::string(v.clocks_event_text)},
          {"other_processes", v.other_processes}};
}

// KernelBench's counts with the host clock: 3 warmups, 1 discarded and 100 reported trials, no early stop.
timing::measure_params kernelbench_host_params() {
  timing::measure_params params;
  params.warmup_min_calls = 4; // KernelBench's 3 warmups and its discarded first trial
  params.warmup_min_ms = 0;
  params.stopping.min_samples = params.stopping.max_samples = 100;
  params.stopping.min_time_ms = 0;
  params.stopping.max_time_ms = 1e9;
  params.stopping.target_rel_ci = 0;
  params.max_wall_ms = 600'000;
  return params;
}

// CUDA Agent's released timing: 5 warmups, then 10 calls; each sample is one call's summed kernel time.
std::vector<double> cuda_agent_samples(const cuda::plugin& plugin, const std::function<void()>& call,
                                       const device_context& device) {
  for (int i = 0; i < 5; ++i)
    call();
  device.sync();
  std::vector<double> samples;
  for (int i = 0; i < 10; ++i) {
    plugin.trace_begin(device.stream);
    call();
    device.sync();
    const cuda::kernel_trace trace = plugin.trace_end();
    samples.push_back(timing::summarize_trace(trace.kernels, trace.timed_stream_id, 1).kernel_ms);
  }
  return samples;
}

// The arguments every method's implementation gets.
struct timed_call {
  const std::function<void()>& call;
  const device_context& device;
  const exec::timing_spec& spec;
  const std::function<void()>& prepare; // may be empty
};

// robust on CUDA: the plugin's adaptive loop (flush, events, device sync), fresh inputs before each sample.
void cuda_robust(const timed_call& t, const cuda::plugin& plugin, timing_result& result) {
  cuda::measure_options options;
  options.stream = t.device.stream;
  options.params = measure_params_of(t.spec);
  options.before_sample = t.prepare;
  cuda::cuda_measurement cm = plugin.measure(t.call, options);
  result.clock = "cuda-event";
  result.params["host_ms"] = cm.host_ms;
  result.params["l2_flush_bytes"] = cm.flush_bytes;
  result.params["warmup_calls"] = cm.events.warmup_calls;
  result.params["warmup_ms"] = cm.events.warmup_ms;
  result.stop_reason = cm.events.stop_reason;
  result.samples_ms = std::move(cm.events.samples_ms);
}

// kernelbench on CUDA: KernelBench main's cuda_event protocol, in the plugin.
void cuda_kernelbench(const timed_call& t, const cuda::plugin& plugin, timing_result& result) {
  cuda::kernelbench_options options;
  options.stream = t.device.stream;
  options.after_warmup = t.device.empty_cache;
  cuda::cuda_measurement cm = plugin.kernelbench(t.call, options);
  result.clock = "cuda-event";
  result.stop_reason = "fixed_count";
  result.params["flush_bytes"] = cm.flush_bytes;
  result.samples_ms = std::move(cm.events.samples_ms);
}

// cuda-agent on CUDA: each sample one call's summed kernel time (CUPTI).
void cuda_agent(const timed_call& t, const cuda::plugin& plugin, timing_result& result) {
  result.clock = "cupti-kernel-sum";
  result.stop_reason = "fixed_count";
  result.samples_ms = cuda_agent_samples(plugin, t.call, t.device);
}

// robust on the host: the cold loop with the host clock, fresh inputs before each sample.
timing::measurement host_robust(const timed_call& t, timing_result& result) {
  timing::host_subject subject(t.call, 0, t.prepare);
  result.method = "robust";
  result.params["headline"] = "median";
  return timing::measure_cold(subject, measure_params_of(t.spec));
}

// kernelbench on the host: KernelBench's counts with the host clock.
timing::measurement host_kernelbench(const timed_call& t, timing_result& result) {
  timing::host_subject subject(t.call);
  result.method = "kernelbench";
  result.params["headline"] = "mean";
  return timing::measure_cold(subject, kernelbench_host_params());
}

// cuda-agent on the host: there is no kernel trace, so robust (recorded).
timing::measurement host_cuda_agent(const timed_call& t, timing_result& result) {
  result.params["fallback"] = "cuda-agent timing needs a GPU kernel trace";
  return host_robust(t, result);
}

// The implementations of exec::timing_methods(), by name: on CUDA (the plugin) and on the host.
struct method_impl {
  std::string_view name;
  void (*cuda)(const timed_call& t, const cuda::plugin& plugin, timing_result& result);
  timing::measurement (*host)(const timed_call& t, timing_result& result);
};

constexpr method_impl k_methods[] = {
    {"robust", cuda_robust, host_robust},
    {"kernelbench", cuda_kernelbench, host_kernelbench},
    {"cuda-agent", cuda_agent, host_cuda_agent},
};

const method_impl& impl_of(const std::string& name) {
  for (const auto& m : k_methods)
    if (m.name == name) return m;
  throw std::invalid_argument("timing method '" + name + "' has no implementation in this worker");
}

timing_result time_cuda(const timed_call& t, const cuda::plugin& plugin) {
  timing_result result;
  result.params = t.spec;
  result.params["headline"] = std::string(exec::timing_method_named(t.spec.method).headline);
  result.method = t.spec.method;
  const cuda::nvml_snapshot before = plugin.nvml();
  impl_of(t.spec.method).cuda(t, plugin, result);
  record_nvml(before, plugin.nvml(), result);
  return result;
}

timing_result time_on_device(const std::function<void()>& call, const device_context& device,
                             const exec::timing_spec& spec, const std::function<void()>& prepare) {
  const timed_call t{call, device, spec, prepare};
  if (device.cuda) {
    std::string error;
    if (const cuda::plugin* plugin = cuda_plugin(error)) {
      try {
        return time_cuda(t, *plugin);
      } catch (const cuda::plugin_error& e) { // the plugin's own failure, not the candidate's
        error = e.what();
      }
    }
    synced_host_subject subject(call, device.sync, prepare);
    const timing::measurement m = timing::measure_cold(subject, measure_params_of(spec));
    timing_result result{"host-median", "host+sync", m.stop_reason, spec, m.samples_ms};
    result.params["headline"] = "median";
    result.params["cuda_plugin_error"] = error;
    result.params["warmup_calls"] = m.warmup_calls;
    result.params["warmup_ms"] = m.warmup_ms;
    return result;
  }
  timing_result result;
  result.params = spec;
  timing::measurement m = impl_of(spec.method).host(t, result);
  result.clock = "host";
  result.params["warmup_calls"] = m.warmup_calls;
  result.params["warmup_ms"] = m.warmup_ms;
  result.stop_reason = m.stop_reason;
  result.samples_ms = std::move(m.samples_ms);
  return result;
}

} // namespace

// The samples between two NVML snapshots are flagged when either shows a clock-slowing reason; other
// processes on the GPU are counted (co_tenants) and named in a warning.
void record_nvml(const cuda::nvml_snapshot& before, const cuda::nvml_snapshot& after, timing_result& result) {
  result.params["nvml_before"] = nvml_json(before);
  result.params["nvml_after"] = nvml_json(after);
  if (!before.available || !after.available) return;
  const auto slowing = [](const cuda::nvml_snapshot& s) {
    return s.values.clocks_event_reasons > 0 && (s.values.clocks_event_reasons & k_slowing_reasons) != 0;
  };
  result.params["throttled"] = slowing(before) || slowing(after);
  const std::int64_t others = std::max(before.values.other_processes, after.values.other_processes);
  if (others > 0) {
    result.params["co_tenants"] = others;
    result.params["warning"] =
        std::to_string(others) + " other process(es) used the GPU while this subject was timed";
  }
}

timing::host_probe& process_host_probe() {
  static timing::host_probe probe; // one 8 MiB chase buffer per worker process
  return probe;
}

const cuda::plugin* shared_cuda_plugin(std::string& error) {
  return cuda_plugin(error);
}

nlohmann::json probe_json(const timing::host_probe_result& p) {
  return {{"cpu_ns", p.cpu_ns}, {"mem_ns", p.mem_ns}};
}

void record_host_probes(const std::vector<timing::host_probe_result>& probes, nlohmann::json& params) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : probes)
    list.push_back(probe_json(p));
  const double change = timing::host_change(probes);
  params["host_probe"] = list;
  params["host_change"] = change;
  params["host_changed"] = change > k_host_change_flag;
}

timing_result time_callable(const std::function<void()>& call, const device_context& device,
                            const exec::timing_spec& spec, const std::function<void()>& prepare) {
  timing::host_probe& probe = process_host_probe();
  const timing::host_probe_result before = probe.measure();
  timing_result result = time_on_device(call, device, spec, prepare);
  record_host_probes({before, probe.measure()}, result.params);
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
  // Per kernel name: launches and summed time, most time first (the built-in agent's profile table).
  std::map<std::string, std::pair<std::size_t, std::uint64_t>> by_name;
  for (const auto& k : trace.kernels) {
    auto& [launches, ns] = by_name[k.name];
    ++launches;
    ns += k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0;
  }
  std::vector<std::pair<std::string, std::pair<std::size_t, std::uint64_t>>> ranked(by_name.begin(),
                                                                                    by_name.end());
  std::sort(ranked.begin(), ranked.end(),
            [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
  nlohmann::json table = nlohmann::json::array();
  for (std::size_t i = 0; i < ranked.size() && i < 16; ++i)
    table.push_back({{"name", ranked[i].first},
                     {"launches", ranked[i].second.first},
                     {"ms", static_cast<double>(ranked[i].second.second) * 1e-6},
                     {"library", std::string(timing::library_of(ranked[i].first))}});
  return {{"calls", calls},
          {"kernels", summary.kernels},
          {"kernels_per_call", summary.kernels_per_call},
          {"streams", summary.streams},
          {"busy_ms_per_call", summary.busy_ms_per_call},
          {"kernel_ms", summary.kernel_ms},
          {"library_share", summary.library_share},
          {"libraries", libraries},
          {"side_stream", side.flagged},
          {"other_streams", side.other_streams},
          {"busy_exceeds_events", side.busy_exceeds_events},
          {"side_stream_reason", side.reason},
          {"dropped_records", trace.dropped_records},
          {"first_kernels", names},
          {"kernel_table", table}};
}

} // namespace kj::worker
