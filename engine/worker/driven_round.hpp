// The runner's side of a timing round the judge drives call by call (the robust method): the judge sends each
// call's seed, then its go, and brackets every call on its own clock. The runner holds no seed of a call
// before the judge prepares it, draws nothing ahead, and reports one sample per call, which the judge bounds
// (engine/worker/driven_timing.hpp). Requests:
//   tb (begin): the round's slots; the sampler (CUDA events and the L2 flush, or the host clock and the LLC
//      flush) and the collector off for the round.
//   tp (prepare): the previous call's output dropped, the next call's inputs drawn from the seed the request
//      carries (none: a calibration round, nothing drawn), the cache flushed; replies {"draw_ms"}.
//   tg (go): start, the call, stop: the sample goes out at once ({"ok", "ms"}); then, before anything else
//      runs, the output is snapshotted into a slot when the reservoir picks it, and a second line says so.
//   te (end): the last call's output into the last slot; everything dropped; replies {"calls", "snapshot"}.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "engine/worker/line_socket.hpp"
#include "engine/worker/output_export.hpp"
#include "engine/worker/tensor_view.hpp"
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
  // Sends the sample line and the snapshot line itself; throws what the call raised (before anything is sent).
  void go(line_socket& socket);
  // The reply of te; "flags": backend flags changed since the candidate was imported (name -> "old -> new").
  nlohmann::json end();

private:
  void flush();
  void start();
  double stop_ms();
  nlohmann::json take(long slot);

  round_context m_ctx;
  bool m_calibration = false;
  bool m_flush = true; // a calibration round may leave the cache alone (the CPU: its flush is milliseconds)
  long m_slots = 0;
  std::uint64_t m_slot_bytes = 0;
  long m_calls = 0;
  pybind11::object m_inputs, m_current;
  std::unique_ptr<cuda::sampler> m_sampler;
  std::unique_ptr<timing::host_cache_flusher> m_host_flusher;
  pybind11::object m_device_sync; // torch's device synchronize when CUDA has no plugin
  timing::host_clock::time_point m_host_start;
  std::optional<gc_off> m_no_gc;
};

} // namespace kj::worker
