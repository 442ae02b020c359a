// Implements the runner's side of a round the judge drives call by call.
#include "engine/worker/driven_round.hpp"

#include "engine/worker/runner_call.hpp"
#include "engine/worker/support.hpp"

#include <algorithm>
#include <chrono>
#include <random>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {

driven_round::driven_round(round_context context, const json& begin) : m_ctx(std::move(context)) {
  m_calibration = begin.value("subject", "") == "calibration";
  m_flush = !m_calibration || begin.value("flush", true);
  m_slots = m_calibration ? 0 : begin.value("slots", 0L);
  m_slot_bytes = begin.value("slot_bytes", std::uint64_t{0});
  if (m_slots > 0 && static_cast<std::uint64_t>(m_slots) * m_slot_bytes > m_ctx.arena.bytes)
    throw std::runtime_error("the arena is smaller than the snapshots the judge asked for");
  if (m_ctx.cuda && m_ctx.plugin)
    m_sampler = std::make_unique<cuda::sampler>(
        *m_ctx.plugin, m_ctx.session.attr("stream")().cast<std::uint64_t>(), begin.value("flush_bytes", 0ull));
  else if (m_ctx.cuda)
    m_device_sync = py::module_::import("torch").attr("_C").attr("_cuda_synchronize");
  else if (m_flush)
    m_host_flusher = std::make_unique<timing::host_cache_flusher>();
  if (!m_calibration) {
    m_inputs = m_ctx.timing_inputs(m_ctx.session.attr("problem"), m_ctx.session.attr("device"), 0, true,
                                   "device", false); // nothing drawn before the judge sends a seed
    m_ctx.session.attr("set_forbidden")(true); // as around a checked call (kj_runner.py)
  }
  m_no_gc.emplace(); // for the whole round, as inside every checked call
}

driven_round::~driven_round() {
  try {
    m_current = py::none();
    if (m_inputs) m_inputs.attr("drop")();
    if (!m_calibration) m_ctx.session.attr("set_forbidden")(false);
  } catch (const std::exception&) { // the round failed: the runner reports that, not this cleanup
  }
}

json driven_round::begin_reply() const {
  return {{"ok", true},
          {"flush_bytes", m_sampler        ? m_sampler->flush_bytes()
                          : m_host_flusher ? m_host_flusher->bytes()
                                           : 0}};
}

void driven_round::flush() {
  if (!m_flush) return;
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

json driven_round::prepare(const json& request) {
  m_current = py::none(); // the last call's output goes (it was snapshotted right after its call, if picked)
  double draw_ms = 0;
  if (!m_calibration) {
    if (!request.contains("seed")) throw std::runtime_error("a timed call's preparation without its seed");
    const candidate_modes_off off(m_ctx.trusted); // a mode left entered cannot watch kj draw the inputs
    const auto start = std::chrono::steady_clock::now();
    m_inputs.attr("prepare_seeded")(request["seed"].get<std::uint64_t>());
    if (m_ctx.cuda) m_ctx.session.attr("sync")();
    draw_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  flush();
  return {{"ok", true}, {"draw_ms", draw_ms}};
}

void driven_round::go(line_socket& socket) {
  double ms = 0;
  if (m_calibration) {
    start();
    ms = stop_ms();
  } else {
    const py::object inputs = m_inputs.attr("current");
    start();
    m_current = call_forward(m_ctx.session, m_ctx.model, inputs);
    ms = stop_ms();
    ++m_calls;
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
