// The runner's side of a timing round the judge drives call by call, for every subject and timing method: the
// judge runs the loop (warmup, stopping rule or fixed counts), sends each call's seed and its go, and
// brackets every call on its own clock (engine/worker/driven_timing.hpp). The runner has no timing loop of
// its own and reports one sample per call. Requests:
//   tb (begin): the subject (candidate, empty, graph, calibration), the inputs (fresh: a seed per call, drawn
//      when the call is prepared; fixed: one set drawn now from the round's recipe), the flush's size, the
//      snapshot slots; the sampler (CUDA events and the L2 flush, or the host clock and the LLC flush) and
//      the collector off for the round.
//   tp (prepare): the previous call's output dropped, the next call's inputs drawn from the seed the request
//      carries (fresh rounds), the cache flushed unless "flush" is false; replies {"draw_ms"}.
//   tg (go): start, the call, stop: the sample goes out at once ({"ok", "ms"}); then, before anything else
//      runs, the output is snapshotted into a slot when the reservoir picks it, and a second line says so.
//      With "trace" (the cuda-agent method) the sample is the call's summed kernel time (CUPTI).
//   tc: the device's cached memory returned (KernelBench empties it after its warmup).
//   te (end): the last call's output into the last slot; everything dropped; replies {"calls", "snapshot"}.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "engine/worker/line_socket.hpp"
#include "engine/worker/output_export.hpp"
#include "engine/worker/tensor_view.hpp"
#include "engine/worker/timing_cpus.hpp"
#include "timing/cache_flush.hpp"
#include "timing/host_clock.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <pybind11/embed.h>

namespace kj::worker {

// What a round needs of the runner: its trusted handles, session, model, arena and plugin.
struct [[gnu::visibility("hidden")]] round_context { // hidden, as pybind11's types are
  const trusted_handles& trusted;
  pybind11::object session;
  pybind11::object model;
  pybind11::object timing_inputs; // kj_recipes.TimingInputs, captured before the candidate was imported
  arena_view arena;
  const cuda::plugin* plugin = nullptr; // CUDA: events and the L2 flush; null on the CPU
  bool cuda = false;
};

class [[gnu::visibility("hidden")]] driven_round {
public:
  driven_round(round_context context, const nlohmann::json& begin);
  ~driven_round();
  driven_round(const driven_round&) = delete;
  driven_round& operator=(const driven_round&) = delete;

  nlohmann::json begin_reply() const;
  nlohmann::json prepare(const nlohmann::json& request);
  // Sends the sample line and the snapshot line itself; throws what the call raised (before anything is
  // sent).
  void go(line_socket& socket, const nlohmann::json& request);
  nlohmann::json empty_cache();
  // The reply of te; "flags": backend flags changed since the candidate was imported (name -> "old -> new").
  nlohmann::json end();

private:
  void flush();
  void call();
  void start();
  double stop_ms();
  double traced_ms();
  nlohmann::json take(long slot);

  round_context m_ctx;
  std::string m_subject; // candidate, empty, graph, calibration
  bool m_fresh = false;  // a seed per call (else one fixed set, or none)
  long m_slots = 0;
  std::uint64_t m_slot_bytes = 0;
  long m_calls = 0;
  pybind11::object m_inputs, m_current, m_replay;
  std::unique_ptr<cuda::sampler> m_sampler;
  std::unique_ptr<timing::host_cache_flusher> m_host_flusher;
  pybind11::object m_device_sync; // torch's device synchronize when CUDA has no plugin
  timing::host_clock::time_point m_host_start;
  std::optional<gc_off> m_no_gc;
  std::optional<thread_on_cpu> m_cpu; // the CPU the judge named for the round (KJ_TIMING_CPU)
};

} // namespace kj::worker
