// Implements the worker's shared pieces.
#include "engine/worker/support.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {

json to_json(py::handle object) {
  return json::parse(py::module_::import("kj_common").attr("json_text")(object).cast<std::string>());
}

std::string verdict_of(py::module_& runtime, py::error_already_set& error) {
  if (error.matches(runtime.attr("KjError"))) return error.value().attr("kind").cast<std::string>();
  return "runtime_error";
}

std::string reason_of(py::module_& runtime, py::error_already_set& error) {
  if (error.matches(runtime.attr("KjError"))) return error.value().attr("reason").cast<std::string>();
  return "";
}

std::string python_error_text(py::module_& runtime, py::error_already_set& error) {
  if (error.matches(runtime.attr("KjError"))) return error.value().attr("message").cast<std::string>();
  return runtime.attr("format_exception")(error.value()).cast<std::string>();
}

void report_timing(result_channel& channel, const std::string& subject, const timing_result& result,
                   const json& extra) {
  json event{{"type", "timing"},
             {"subject", subject},
             {"method", result.method},
             {"clock", result.clock},
             {"params", result.params},
             {"stop_reason", result.stop_reason},
             {"samples_ms", result.samples_ms}};
  event.update(extra);
  channel.emit(event);
}

device_context session_device(device_kind kind, py::object& session) {
  device_context device;
  device.cuda = kind == device_kind::cuda;
  device.stream = session.attr("stream")().cast<std::uint64_t>();
  py::object sync = session.attr("sync");
  py::object empty_cache = session.attr("empty_cache");
  device.sync = [sync] { sync(); };
  device.empty_cache = [empty_cache] { empty_cache(); };
  return device;
}

void phase_clock::enter(const std::string& name, json extra) {
  close();
  m_name = name;
  m_open = true;
  m_start = std::chrono::steady_clock::now();
  extra["type"] = "phase";
  extra["phase"] = name;
  m_channel.emit(extra);
}

void phase_clock::close() {
  if (!m_open) return;
  m_open = false;
  m_channel.emit(
      {{"type", "phase_time"},
       {"phase", m_name},
       {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count()}});
}

gc_paused::gc_paused() : m_gc(py::module_::import("gc")) {
  PyGC_Collect();
  PyGC_Disable(); // the C API: the gc module's functions may be the candidate's
}

gc_paused::~gc_paused() {
  PyGC_Enable();
}

} // namespace kj::worker
