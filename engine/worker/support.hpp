// Pieces every worker mode shares: JSON from Python objects, verdicts from exceptions, timing events, the
// device a session times on, and a paused garbage collector.
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/worker/channel.hpp"
#include "engine/worker/timing_bridge.hpp"

#include <chrono>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>
#include <string>

namespace kj::worker {

nlohmann::json to_json(pybind11::handle object);

// Maps a Python exception to a verdict: KjError carries its own kind, anything else is a runtime error.
std::string verdict_of(pybind11::module_& runtime, pybind11::error_already_set& error);

// The reason a KjError carries (out_of_memory, tolerance, ...), or "".
std::string reason_of(pybind11::module_& runtime, pybind11::error_already_set& error);

// The text of a Python exception: the KjError message when it is one, else the formatted traceback.
std::string python_error_text(pybind11::module_& runtime, pybind11::error_already_set& error);

// A "timing" event; `extra` fields are added to it (e.g. the problem's index in a batch).
void report_timing(result_channel& channel, const std::string& subject, const timing_result& result,
                   const nlohmann::json& extra = nlohmann::json::object());

// The device `session` runs on, with its stream, synchronize and empty_cache bound to the session.
device_context session_device(device_kind device, pybind11::object& session);

// The device's name for the Python half ("cpu" or "cuda").
inline pybind11::str py_device(device_kind device) {
  return pybind11::str(to_string(device));
}

// The phase an evaluation is in: a "phase" event when it starts (a crash's message names it) and a
// "phase_time" event with its seconds when the next starts (or the clock ends), so that the phases partition
// the worker's time after its first report. name() is the phase entered last.
class phase_clock {
public:
  explicit phase_clock(result_channel& channel) : m_channel(channel) {}
  ~phase_clock() { close(); }
  phase_clock(const phase_clock&) = delete;
  phase_clock& operator=(const phase_clock&) = delete;

  void enter(const std::string& name, nlohmann::json extra = nlohmann::json::object());
  void close();
  const std::string& name() const { return m_name; }

private:
  result_channel& m_channel;
  std::string m_name;
  bool m_open = false;
  std::chrono::steady_clock::time_point m_start;
};

// Python's cyclic garbage collector stays off while subjects are timed (as timeit does): a collection inside
// a sample would add milliseconds to a launch-bound forward. Collected once before, re-enabled after.
class [[gnu::visibility("hidden")]] gc_paused { // hidden, as pybind11's types are
public:
  gc_paused();
  ~gc_paused();
  gc_paused(const gc_paused&) = delete;
  gc_paused& operator=(const gc_paused&) = delete;

private:
  pybind11::module_ m_gc;
};

} // namespace kj::worker
