// Times a Python callable from C++: the worker's bridge to the timing engine (host clock, or CUDA events).
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "timing/host_probe.hpp"
#include "timing/measure.hpp"

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::worker {

struct timing_result {
  std::string method;
  std::string clock;
  std::string stop_reason;
  nlohmann::json params;
  std::vector<double> samples_ms;
};

// What the worker knows about the device it times on.
struct device_context {
  bool cuda = false;
  std::uint64_t stream = 0;          // torch.cuda.current_stream().cuda_stream
  std::function<void()> sync;        // waits for all device work (a no-op on the CPU)
  std::function<void()> empty_cache; // torch.cuda.empty_cache() (KernelBench calls it after warmup)
};

// Times `call` by spec.method:
// - "robust": warmup, then samples until the stopping rule is met. On CUDA: CUDA events on the timed stream
//   with an L2 flush before each sample and a device-wide synchronization inside it (the timing plugin), and
//   NVML snapshots before and after; when the plugin cannot be loaded, the host clock around call +
//   synchronize, with the reason recorded in params. On the CPU: the host clock with an LLC flush.
// - "kernelbench": KernelBench main's cuda_event protocol (3 synced warmups, empty_cache, 1 discarded + 100
//   trials, 256 MB flush, events on the current stream); on the CPU the same counts with the host clock.
// - "cuda-agent": 5 warmups, then 10 calls each traced alone; a sample is the call's summed kernel time.
//   Needs the kernel trace: on the CPU it falls back to "robust" (recorded in params).
// params["headline"] names the statistic reports use: "median" (robust) or "mean" (the other two).
// Every method is bracketed by host probes (timing/host_probe.hpp), recorded by record_host_probes.
// `prepare` (may be empty) runs before each sample's flush, outside the timed window: fresh inputs per call.
timing_result time_callable(const std::function<void()>& call, const device_context& device,
                            const exec::timing_spec& spec, const std::function<void()>& prepare = {});

// The cold loop's parameters of a timing spec (warmup, the stopping rule, the wall-clock cap).
timing::measure_params measure_params_of(const exec::timing_spec& spec);

// NVML before and after a subject into its params (nvml_before, nvml_after, throttled, and a warning when
// other processes used the GPU).
void record_nvml(const cuda::nvml_snapshot& before, const cuda::nvml_snapshot& after, timing_result& result);

// A host probe series moved by more than this flags the timing `host_changed`: launch-bound samples move with
// the host's speed, so such a timing may not repeat on a quieter host.
inline constexpr double k_host_change_flag = 0.05;

nlohmann::json to_json(const timing::host_probe_result& probe);

// The worker process's host probe (one 8 MiB chase buffer), measured before and after each timing.
timing::host_probe& process_host_probe();

// The process's CUDA timing plugin, loaded on first use; null (and `error` set) when it cannot be loaded.
const cuda::plugin* shared_cuda_plugin(std::string& error);

// Stores `probes` in params: host_probe (the series), host_change (timing::host_change) and host_changed.
void record_host_probes(const std::vector<timing::host_probe_result>& probes, nlohmann::json& params);

// The CUPTI kernel trace of `calls` calls, taken in a pass of its own, summarized (library share, streams,
// side-stream flag against `event_ms`); null when not on CUDA or the plugin is unavailable.
nlohmann::json trace_callable(const std::function<void()>& call, const device_context& device,
                              double event_ms, int calls = 3);

} // namespace kj::worker
