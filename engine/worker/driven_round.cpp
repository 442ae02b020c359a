// Implements the runner's side of a round the judge drives call by call.
#include "engine/worker/driven_round.hpp"

#include "engine/worker/runner_call.hpp"
#include "engine/worker/support.hpp"
#include "timing/trace_summary.hpp"

#include <algorithm>
#include <chrono>
#include <random>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {

driven_round::driven_round(round_context context, const json& begin) : m_ctx(std::move(context)) {
  m_subject = begin.value("subject", "candidate");
  const bool calibration = m_subject == "calibration";
  m_fresh = !calibration && !begin.contains("fixed");
  m_slots = m_subject == "candidate" ? begin.value("slots", 0L) : 0L;
  m_slot_bytes = begin.value("slot_bytes", std::uint64_t{0});
  if (m_slots > 0 && static_cast<std::uint64_t>(m_slots) * m_slot_bytes > m_ctx.arena.bytes)
    throw std::runtime_error("the arena is smaller than the snapshots the judge asked for");
  const bool flush = begin.value("flush", true);
  if (m_ctx.cuda && m_ctx.plugin)
    m_sampler =
        std::make_unique<cuda::sampler>(*m_ctx.plugin, m_ctx.session.attr("stream")().cast<std::uint64_t>(),
                                        begin.value("flush_bytes", std::uint64_t{0}));
  else if (m_ctx.cuda)
    m_device_sync = py::module_::import("torch").attr("_C").attr("_cuda_synchronize");
  else if (flush)
    m_host_flusher = std::make_unique<timing::host_cache_flusher>();
  if (!calibration) {
    const json fixed = begin.value("fixed", json::object()); // KernelBench's one set: its seed, its draw
    m_inputs =
        m_ctx.timing_inputs(m_ctx.session.attr("problem"), m_ctx.session.attr("device"),
                            fixed.value("seed", std::uint64_t{0}), m_fresh, fixed.value("rng", "device"),
                            !m_fresh); // fresh: nothing drawn before the judge sends a call's seed
    if (m_subject == "graph") m_replay = m_ctx.session.attr("graph_of")(m_inputs.attr("current"));
    m_ctx.session.attr("set_forbidden")(true); // as around a checked call (kj_runner.py)
  }
  m_no_gc.emplace(); // for the whole round, as inside every checked call
  if (begin.contains("cpu")) m_cpu.emplace(begin.value("cpu", -1));
}

driven_round::~driven_round() {
  try {
    m_current = py::none();
    if (m_inputs) m_inputs.attr("drop")();
    if (m_subject != "calibration") m_ctx.session.attr("set_forbidden")(false);
  } catch (const std::exception&) { // the round failed: the runner reports that, not this cleanup
  }
}

json driven_round::begin_reply() const {
  json reply{{"ok", true},
             {"flush_bytes", m_sampler        ? m_sampler->flush_bytes()
                             : m_host_flusher ? m_host_flusher->bytes()
                                              : 0}};
  if (m_cpu) reply["cpu_pinned"] = m_cpu->pinned();
  return reply;
}

void driven_round::flush() {
  if (m_sampler)
    m_sampler->flush();
  else if (m_host_flusher)
    m_host_flusher->flush();
  else if (m_device_sync)
    m_device_sync();
}

void driven_round::start() {
  m_host_start = timing::host_clock::now();
  if (m_sampler) m_sampler->start();
}

double driven_round::stop_ms() {
  if (m_sampler) return m_sampler->stop().first;
  if (m_device_sync) m_device_sync();
  return timing::elapsed_ms(m_host_start, timing::host_clock::now());
}

void driven_round::call() {
  if (m_subject == "candidate") {
    m_current = call_forward(m_ctx.session, m_ctx.model, m_inputs.attr("current"));
    ++m_calls;
  } else if (m_subject == "empty") {
    m_ctx.session.attr("empty_forward")(m_inputs.attr("current"));
  } else if (m_subject == "graph") {
    m_replay();
  }
}

// The cuda-agent method's sample: the call's kernels summed from a CUPTI trace of it alone.
double driven_round::traced_ms() {
  if (!m_ctx.plugin) throw std::runtime_error("a traced call needs the CUDA plugin");
  const std::uint64_t stream = m_ctx.session.attr("stream")().cast<std::uint64_t>();
  m_ctx.plugin->trace_begin(stream);
  call();
  m_ctx.session.attr("sync")();
  const cuda::kernel_trace trace = m_ctx.plugin->trace_end();
  return timing::summarize_trace(trace.kernels, trace.timed_stream_id, 1).kernel_ms;
}

json driven_round::prepare(const json& request) {
  m_current = py::none(); // the last call's output goes (it was snapshotted right after its call, if picked)
  double draw_ms = 0;
  if (m_fresh) {
    if (!request.contains("seed")) throw std::runtime_error("a timed call's preparation without its seed");
    const candidate_modes_off off(m_ctx.trusted); // a mode left entered cannot watch kj draw the inputs
    const auto start = std::chrono::steady_clock::now();
    m_inputs.attr("prepare_seeded")(request["seed"].get<std::uint64_t>());
    if (m_ctx.cuda) m_ctx.session.attr("sync")();
    draw_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  if (request.value("flush", true)) flush();
  return {{"ok", true}, {"draw_ms", draw_ms}};
}

void driven_round::go(line_socket& socket, const json& request) {
  double ms = 0;
  if (request.value("trace", false)) {
    ms = traced_ms();
  } else {
    start();
    call();
    ms = stop_ms();
  }
  socket.send({{"ok", true}, {"ms", ms}}); // first: the judge's clock stops on this line
  json after{{"ok", true}};
  if (m_slots > 1 && !m_current.is_none()) {
    // The reservoir over the calls so far, each choice drawn from the OS after the call: slots 0..S-2 hold a
    // uniform sample of them; the last slot takes the round's last call at its end.
    const long k = m_calls - 1;
    long slot = -1;
    if (k < m_slots - 1) {
      slot = k;
    } else {
      std::random_device os;
      const std::uint64_t j =
          ((static_cast<std::uint64_t>(os()) << 32) ^ os()) % static_cast<std::uint64_t>(k + 1);
      if (j < static_cast<std::uint64_t>(m_slots - 1)) slot = static_cast<long>(j);
    }
    if (slot >= 0) after["snapshot"] = take(slot);
  }
  socket.send(after);
}

json driven_round::empty_cache() {
  m_ctx.session.attr("empty_cache")();
  return {{"ok", true}};
}

json driven_round::take(long slot) {
  const std::uint64_t at = static_cast<std::uint64_t>(slot) * m_slot_bytes;
  json taken = snapshot_outputs(m_ctx.trusted, m_current,
                                {m_ctx.arena.ptr + at, m_slot_bytes, m_ctx.arena.cuda}, at, m_ctx.plugin);
  taken["call"] = m_calls - 1;
  taken["slot"] = slot;
  return taken;
}

json driven_round::end() {
  json reply{{"ok", true}, {"calls", m_calls}};
  if (m_slots > 0 && !m_current.is_none()) reply["snapshot"] = take(m_slots - 1);
  const json changed = to_json(m_ctx.session.attr("flag_changes")());
  if (!changed.empty()) reply["flags"] = changed;
  m_current = py::none();
  if (m_inputs) m_inputs.attr("drop")();
  m_no_gc.reset();
  m_ctx.session.attr("empty_cache")();
  return reply;
}

} // namespace kj::worker
