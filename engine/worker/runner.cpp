// The runner's loop: start Python and torch, capture what must not be patched, then answer requests one by
// one.
#include "engine/worker/runner.hpp"

#include "engine/exec/messages.hpp"
#include "engine/exec/sandbox.hpp"
#include "engine/worker/driven_round.hpp"
#include "engine/worker/line_socket.hpp"
#include "engine/worker/output_export.hpp"
#include "engine/worker/python_env.hpp"
#include "engine/worker/runner_call.hpp"
#include "engine/worker/support.hpp"
#include "engine/worker/timing_bridge.hpp"

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <fmt/core.h>
#include <map>
#include <optional>
#include <pybind11/stl.h>
#include <random>
#include <sys/mman.h>
#include <unistd.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

json failure(const std::string& kind, const std::string& error) {
  return {{"ok", false}, {"kind", kind}, {"error", error}};
}

class runner {
public:
  runner(py::module_ runtime, device_kind device, line_socket& socket)
      : m_runtime(std::move(runtime)), m_device(device), m_socket(&socket) {
    m_arena.cuda = device == device_kind::cuda;
    m_trusted = capture_trusted();
    // kj's own input draws, taken before the candidate can replace sys.modules' entry
    m_timing_inputs = py::module_::import("kj_recipes").attr("TimingInputs");
    if (m_arena.cuda) {
      std::string error;
      m_plugin = shared_cuda_plugin(error);
      if (!m_plugin) throw std::runtime_error("the CUDA plugin cannot be loaded: " + error);
    }
  }
  ~runner() { close_arena(); }

  json handle(const json& request) {
    const std::string op = request.value("op", "");
    if (op != "deliver" && op != "arena") m_pending.reset(); // outputs wait only for the arena they asked for
    if (op == "load") return load(request);
    if (op == "arena") return open_arena(request);
    if (op == "tb") return begin_round(request);
    if (op == "tp")
      return m_round ? m_round->prepare(request) : failure("harness_error", "tp outside a round");
    if (op == "tc") return m_round ? m_round->empty_cache() : failure("harness_error", "tc outside a round");
    if (op == "te") return end_round();
    if (!m_session) return failure("harness_error", "request '" + op + "' before load");
    if (op == "forward") return forward(request);
    if (op == "deliver") return deliver_pending();
    if (op == "release") return release();
    if (op == "memory") return {{"ok", true}, {"peaks", to_json(m_session.attr("memory_peaks")())}};
    if (op == "trace") return trace(request);
    if (op == "findings") return findings(request);
    return failure("harness_error", "unknown request '" + op + "'");
  }

  bool in_round() const { return m_round != nullptr; }

  // "tg": one timed call of the round the judge drives; it answers with two lines (driven_round::go).
  void go(line_socket& socket, const json& request) {
    if (!m_round) throw std::runtime_error("tg outside a round");
    m_round->go(socket, request);
  }

private:
  // A round the judge drives (calibration: before the candidate is loaded, only kj's code runs in it).
  json begin_round(const json& r) {
    m_round.reset();
    const bool calibration = r.value("subject", "") == "calibration";
    if (!calibration && !m_session) return failure("harness_error", "a timed round before load");
    map_arena();
    py::object session =
        m_session ? m_session
                  : py::module_::import("kj_runner").attr("CalibrationSession")(py_device(m_device));
    m_round =
        std::make_unique<driven_round>(round_context{m_trusted, session, calibration ? py::none() : m_model,
                                                     m_timing_inputs, m_arena, m_plugin, m_arena.cuda},
                                       r);
    return m_round->begin_reply();
  }

  json end_round() {
    if (!m_round) return failure("harness_error", "te outside a round");
    json reply = m_round->end();
    m_round.reset();
    reply["arena_id"] = m_arena_id;
    return reply;
  }

  json load(const json& r) {
    const json protocol = r.value("protocol", json::object());
    m_session =
        py::module_::import("kj_runner")
            .attr("RunnerSession")(py_device(m_device), to_python(protocol), r.value("prebuilt", true));
    m_session.attr("load")(r["problem"].value("path", ""), r["problem"].value("source", ""),
                           r["candidate"].value("path", ""), r["candidate"].value("source", ""),
                           to_python(r.value("overrides", json::object())), protocol.value("seed", 42));
    m_model = m_session.attr("model_for")(py::dict());
    json reply{{"ok", true}};
    if (const json flags = to_json(m_session.attr("flag_changes")()); !flags.empty()) reply["flags"] = flags;
    return reply; // backend flags the import changed, named at once
  }

  json open_arena(const json& r) {
    close_arena();
    m_arena.bytes = r.value("bytes", std::uint64_t{0});
    m_arena.cuda = r.value("kind", "") == "cuda";
    m_arena_id = r.value("id", 0);
    if (m_arena.cuda && r.value("fd", false)) { // by descriptor: mapped here, the descriptor closed
      const int fd = m_socket->take_fd();
      if (fd < 0) throw std::runtime_error("the arena's descriptor did not arrive");
      m_arena.ptr = m_plugin->share_import(fd, m_arena.bytes);
      m_arena_shared = true;
    } else if (m_arena.cuda) {
      const std::string hex = r.value("handle", "");
      std::string handle(64, '\0');
      for (std::size_t i = 0; i < 64 && 2 * i + 1 < hex.size(); ++i)
        handle[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
      m_arena.ptr = m_plugin->ipc_open(handle);
    } else {
      const int fd = r.value("fd", false) ? m_socket->take_fd()
                                          : ::open(r.value("path", "").c_str(), O_RDWR | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error("the arena's descriptor did not arrive");
      m_arena_fd = fd;
      map_arena();
    }
    return {{"ok", true}};
  }

  // A host arena arrives as a descriptor and is mapped when outputs first go into it.
  void map_arena() {
    if (m_arena.cuda || m_arena.ptr != 0 || m_arena_fd < 0) return;
    void* p = ::mmap(nullptr, m_arena.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m_arena_fd, 0);
    if (p == MAP_FAILED) throw std::runtime_error("cannot map the arena");
    m_arena.ptr = reinterpret_cast<std::uint64_t>(p);
    ::close(m_arena_fd); // the mapping is all this process needs: no descriptor for the candidate to find
    m_arena_fd = -1;
  }

  void close_arena() {
    if (m_arena.ptr != 0) {
      if (m_arena.cuda && m_arena_shared)
        m_plugin->share_free(m_arena.ptr);
      else if (m_arena.cuda)
        m_plugin->ipc_close(m_arena.ptr);
      else
        ::munmap(reinterpret_cast<void*>(m_arena.ptr), m_arena.bytes);
      m_arena.ptr = 0; // still the device's kind of arena: the next outputs ask for one of that kind
      m_arena_shared = false;
    }
    if (m_arena_fd >= 0) ::close(m_arena_fd);
    m_arena_fd = -1;
    m_arena.bytes = 0;
  }

  // The judge has taken the last outputs: drop them, unmap a large arena (the judge frees it) and return the
  // cached device memory, so that the next case starts with nothing of this one held.
  json release() {
    m_last = py::none();
    m_pending.reset();
    close_arena();
    m_session.attr("empty_cache")();
    return {{"ok", true}};
  }

  // The outputs in the arena, with the request's own fields (`extra`). When the arena is too small the reply
  // asks for `need_bytes`; the same outputs and fields then go out on the judge's `deliver`, after it grew.
  json deliver(const py::object& output, const json& extra = json::object()) {
    map_arena();
    json reply = export_outputs(m_trusted, output, m_arena, m_plugin);
    reply["ok"] = true;
    reply["arena_id"] = m_arena_id;
    if (reply.contains("need_bytes")) {
      m_pending = pending_delivery{output, extra};
      return reply;
    }
    m_pending.reset();
    reply.update(extra);
    return reply;
  }

  json deliver_pending() {
    if (!m_pending) return failure("harness_error", "'deliver' with no outputs waiting for a larger arena");
    const pending_delivery p = *m_pending;
    return deliver(p.output, p.extra);
  }

  // A checked call (a trial, a strict case): inputs from the recipe, then the call by the same entry as a
  // timed one (runner_call.hpp), then the input check; the inputs are gone before the outputs are exported.
  json forward(const json& r) {
    const bool check_inputs = r.value("check_inputs", false);
    // the judge's bound on the input check's copies on the device (the reference outputs' bytes); 0: the host
    const std::uint64_t device_room = r.value("pristine_device_bytes", std::uint64_t{0});
    py::object model, inputs, pristine;
    {
      py::tuple prepared = m_session.attr("prepare_forward")(
          to_python(r["recipe"]), to_python(r.value("sizes", json::object())), check_inputs, device_room);
      model = prepared[0];
      inputs = prepared[1];
      pristine = prepared[2];
    }
    m_session.attr("set_forbidden")(true);
    py::object output;
    try {
      output = call_forward(m_session, model, inputs);
    } catch (...) {
      m_session.attr("set_forbidden")(false);
      throw;
    }
    m_session.attr("set_forbidden")(false);
    json extra;
    bool large = false;
    {
      py::tuple after = m_session.attr("after_forward")(output, model, inputs, pristine, check_inputs);
      extra = {{"inputs_changed", after[0].is_none() ? json::array() : to_json(after[0])},
               {"overlap", after[1].cast<bool>()}};
      large = after[2].cast<bool>();
    }
    inputs = pristine = py::none();
    if (large) m_session.attr("empty_cache")();
    if (const json flags = to_json(m_session.attr("flag_changes")()); !flags.empty()) extra["flags"] = flags;
    m_last = output;
    return deliver(m_last, extra);
  }

  // The profile's CUPTI pass (not a timing): a few calls on one set of inputs of the timings' kind.
  json trace(const json& r) {
    py::object model = m_model;
    py::object inputs;
    {
      const candidate_modes_off off(m_trusted);
      inputs = m_timing_inputs(m_session.attr("problem"), m_session.attr("device"), 42, false, "device")
                   .attr("current");
    }
    const std::function<void()> call = [&] { model(*inputs); };
    json reply{
        {"ok", true},
        {"trace", trace_callable(call, session_device(m_device, m_session), r.value("event_ms", 0.0))}};
    inputs = py::none();
    m_session.attr("empty_cache")();
    return reply;
  }

  json findings(const json& r) {
    json reply{{"ok", true}, {"flags", to_json(m_session.attr("flag_changes")())}};
    try {
      const json seen = to_json(m_session.attr("torch_ops")(to_python(r["recipe"])));
      reply["torch_ops"] = seen.value("ops", json::object());
      reply["dtypes"] = seen.value("dtypes", json::object());
    } catch (py::error_already_set&) { // the forward raised here: the trials report that, not this probe
      reply["torch_ops"] = json::object();
    }
    return reply;
  }

  py::object to_python(const json& value) { return py::module_::import("json").attr("loads")(value.dump()); }

  py::module_ m_runtime;
  device_kind m_device;
  line_socket* m_socket; // the arena's descriptor arrives with its message
  trusted_handles m_trusted;
  const cuda::plugin* m_plugin = nullptr;
  arena_view m_arena;
  int m_arena_fd = -1;         // a host arena's memfd (kept while the judge keeps the arena)
  bool m_arena_shared = false; // a CUDA arena imported by descriptor
  int m_arena_id = 0;
  py::object m_session, m_model, m_last, m_timing_inputs;
  struct pending_delivery {
    py::object output;
    json extra;
  };
  std::optional<pending_delivery> m_pending; // outputs that asked for a larger arena
  std::unique_ptr<driven_round> m_round;     // the round the judge drives, while it lasts
};

} // namespace

int run_runner(const runner_options& options) {
  const int fd = ::fcntl(options.socket_fd, F_DUPFD_CLOEXEC, 200);
  if (fd < 0) return 2;
  ::close(options.socket_fd);
  line_socket socket(fd);
  // Its own uid and gid before anything else runs (engine/exec/identity.hpp): a runner that cannot take them
  // never loads the candidate.
  if (std::string error; !exec::enter_identity(error)) {
    socket.send(failure("crashed", "the runner could not take its sandbox identity: " + error));
    return 2;
  }
  auto interpreter = start_interpreter();
  std::optional<runner> serve;
  try {
    py::module_ runtime = import_modules(python_role::runner);
    py::module_::import("torch").attr("set_grad_enabled")(false); // the runner never needs autograd
    // Two stages: Python and torch are imported (the CPU's work), then the device is touched only when kj
    // says so, never while its judge times (runner_link: a runner started ahead imports while the judge
    // times).
    socket.send({{"ok", true}, {"stage", "imported"}});
    std::string go;
    if (socket.receive(go, std::chrono::hours(24)) != line_socket::status::line) return 2;
    if (const json g = json::parse(go, nullptr, false); !g.is_object() || g.value("op", "") != "start_device")
      return 2;
    if (options.device == device_kind::cuda) py::module_::import("torch").attr("cuda").attr("init")();
    serve.emplace(runtime, options.device, socket);
  } catch (const std::exception& e) {
    socket.send(
        failure("crashed", fmt::format("the runner could not start Python with torch: {}", e.what())));
    return 2;
  }
  // From here on the candidate's code may run: the filter goes on first (engine/exec/sandbox.hpp).
  std::string seccomp_error;
  const bool filtered = exec::install_candidate_seccomp(seccomp_error);
  socket.send({{"ok", true},
               {"ready", true},
               {"pid", ::getpid()},
               {"seccomp", filtered},
               {"seccomp_error", seccomp_error}});
  std::string line;
  // In a timed round on CUDA the next request follows within microseconds: polled for a millisecond without
  // sleeping, so that a wake-up does not land in the judge's bracket of the next call.
  const auto window = [&] {
    const auto now = std::chrono::steady_clock::now();
    return serve->in_round() && options.device == device_kind::cuda
               ? line_socket::spin_window{now, now + std::chrono::milliseconds(1)}
               : line_socket::spin_window{};
  };
  while (socket.receive(line, std::chrono::hours(24), window()) == line_socket::status::line) {
    json reply;
    try {
      const json request = json::parse(line);
      if (request.value("op", "") == "quit") break;
      if (request.value("op", "") == "tg") { // answered with its own two lines
        serve->go(socket, request);
        continue;
      }
      reply = serve->handle(request);
    } catch (py::error_already_set& e) {
      py::module_ runtime = py::module_::import("kj_common");
      reply = failure(verdict_of(runtime, e), python_error_text(runtime, e));
      if (const std::string reason = reason_of(runtime, e); !reason.empty()) reply["reason"] = reason;
    } catch (const std::exception& e) {
      reply = failure("runtime_error", e.what());
    }
    if (!socket.send(reply)) break;
  }
  return 0;
}

} // namespace kj::worker
