// The runner's loop: start Python and torch, capture what must not be patched, then answer requests one by
// one.
#include "harness/worker/runner.hpp"

#include "harness/exec/messages.hpp"
#include "harness/exec/sandbox.hpp"
#include "harness/worker/line_socket.hpp"
#include "harness/worker/output_export.hpp"
#include "harness/worker/python_env.hpp"
#include "harness/worker/support.hpp"
#include "harness/worker/timing_bridge.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <map>
#include <optional>
#include <pybind11/stl.h>
#include <set>
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
    if (!m_session) return failure("harness_error", "request '" + op + "' before load");
    if (op == "forward") return forward(request);
    if (op == "deliver") return deliver_pending();
    if (op == "release") return release();
    if (op == "memory") return {{"ok", true}, {"peaks", to_json(m_session.attr("memory_peaks")())}};
    if (op == "time") return time(request);
    if (op == "fetch") return fetch(request);
    if (op == "trace") return trace(request);
    if (op == "findings") return findings(request);
    return failure("harness_error", "unknown request '" + op + "'");
  }

private:
  json load(const json& r) {
    const json protocol = r.value("protocol", json::object());
    m_session =
        py::module_::import("kj_runner").attr("RunnerSession")(py_device(m_device), to_python(protocol));
    m_session.attr("load")(r["problem"].value("path", ""), r["problem"].value("source", ""),
                           r["candidate"].value("path", ""), r["candidate"].value("source", ""),
                           to_python(r.value("overrides", json::object())), protocol.value("seed", 42));
    m_model = m_session.attr("model_for")(py::dict());
    return {{"ok", true}};
  }

  json open_arena(const json& r) {
    close_arena();
    m_arena.bytes = r.value("bytes", std::uint64_t{0});
    m_arena.cuda = r.value("kind", "") == "cuda";
    m_arena_id = r.value("id", 0);
    if (m_arena.cuda) {
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
  }

  void close_arena() {
    if (m_arena.ptr != 0) {
      if (m_arena.cuda)
        m_plugin->ipc_close(m_arena.ptr);
      else
        ::munmap(reinterpret_cast<void*>(m_arena.ptr), m_arena.bytes);
      m_arena.ptr = 0; // still the device's kind of arena: the next outputs ask for one of that kind
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
    if (m_fetched) m_retained.erase(*m_fetched);
    m_fetched.reset();
    close_arena();
    m_session.attr("empty_cache")();
    return {{"ok", true}};
  }

  // The outputs in the arena, with the request's own fields (`extra`). When the arena is too small the reply
  // asks for `need_bytes`; the same outputs and fields then go out on the judge's `deliver`, after it grew.
  json deliver(const py::object& output, bool parked = false, const json& extra = json::object()) {
    map_arena();
    json reply = export_outputs(m_trusted, output, m_arena, m_plugin, parked);
    reply["ok"] = true;
    reply["arena_id"] = m_arena_id;
    if (reply.contains("need_bytes")) {
      m_pending = pending_delivery{output, parked, extra};
      return reply;
    }
    m_pending.reset();
    reply.update(extra);
    return reply;
  }

  json deliver_pending() {
    if (!m_pending) return failure("harness_error", "'deliver' with no outputs waiting for a larger arena");
    const pending_delivery p = *m_pending;
    return deliver(p.output, p.parked, p.extra);
  }

  json forward(const json& r) {
    py::tuple result =
        m_session.attr("forward")(to_python(r["recipe"]), to_python(r.value("sizes", json::object())),
                                  r.value("check_inputs", false), r.value("phase", "case"));
    m_last = result[0];
    return deliver(m_last, false,
                   {{"inputs_changed", result[1].is_none() ? json::array() : to_json(result[1])},
                    {"overlap", result[2].cast<bool>()}});
  }

  json time(const json& r) {
    const exec::timing_spec spec = r.at("spec").get<exec::timing_spec>();
    const std::string subject = r.value("subject", "candidate");
    const bool fresh = subject == "candidate" && r.value("fresh", false);
    m_timing = py::module_::import("kj_recipes")
                   .attr("TimingInputs")(m_session.attr("problem"), m_session.attr("device"),
                                         r.value("base", std::uint64_t{42}), fresh);
    // With fresh inputs per call, two random calls and the last keep their outputs (a large one moves to the
    // host in the next call's prepare, outside the window); with one fixed input set, the last call only.
    std::set<long> retain;
    if (fresh)
      for (long k : r.value("retain", std::vector<long>{}))
        retain.insert(k);
    m_retained.clear();
    m_fetched.reset();
    long calls = 0;
    py::object model = m_model;
    py::object timing = m_timing;
    py::object park = m_session.attr("park");
    std::function<void()> call;
    if (subject == "empty") {
      py::object empty = m_session.attr("empty_forward");
      call = [empty, &timing] { empty(timing.attr("current")); };
    } else if (subject == "graph") {
      py::object replay = m_session.attr("graph_of")(timing.attr("current"));
      call = [replay] { replay(); };
    } else {
      call = [&] {
        py::object out = model(*timing.attr("current"));
        if (retain.contains(calls)) m_retained[calls] = out;
        m_retained[-1] = out;
        m_last_call = calls++;
      };
    }
    py::object prepare_call = timing.attr("prepare");
    const std::function<void()> prepare = [&] {
      if (m_last_call >= 0 && m_retained.contains(m_last_call))
        m_retained[m_last_call] = park(m_retained[m_last_call]);
      m_retained.erase(-1); // the previous call's output goes before the next inputs are drawn
      prepare_call();
    };
    m_last_call = -1;
    timing_result t;
    {
      const gc_paused no_gc;
      t = time_callable(call, session_device(m_device, m_session), spec, fresh ? prepare : nullptr);
    }
    if (m_retained.contains(m_last_call)) m_retained.erase(-1); // the last call was also a picked one: once
    for (auto& [k, out] : m_retained) // outside the loop now: every kept output may move to the host
      out = park(out);
    timing.attr("drop")(); // the inputs go; `trace` draws its own
    m_session.attr("empty_cache")();
    json kept = json::array();
    for (const auto& [k, _] : m_retained)
      kept.push_back(k < 0 ? m_last_call : k);
    return {{"ok", true},
            {"timing",
             {{"method", t.method},
              {"clock", t.clock},
              {"stop_reason", t.stop_reason},
              {"params", t.params},
              {"samples_ms", t.samples_ms}}},
            {"calls", calls},
            {"retained", kept}};
  }

  json fetch(const json& r) {
    long k = r.value("call", -1L);
    auto it = m_retained.find(k);
    if (it == m_retained.end() && k == m_last_call) it = m_retained.find(-1);
    if (it == m_retained.end()) return failure("harness_error", fmt::format("call {} was not retained", k));
    m_fetched = it->first;
    return deliver(it->second, true, {{"call", k}}); // the judge derives the call's recipe from its own seed
  }

  json trace(const json& r) {
    py::object model = m_model;
    py::object timing = m_timing;
    timing.attr("ensure")();
    const std::function<void()> call = [&] { model(*timing.attr("current")); };
    json reply{
        {"ok", true},
        {"trace", trace_callable(call, session_device(m_device, m_session), r.value("event_ms", 0.0))}};
    timing.attr("drop")();
    m_session.attr("empty_cache")();
    return reply;
  }

  json findings(const json& r) {
    json reply{{"ok", true}, {"flags", to_json(m_session.attr("flag_changes")())}};
    try {
      reply["torch_ops"] = to_json(m_session.attr("torch_ops")(to_python(r["recipe"])));
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
  int m_arena_fd = -1; // a host arena's memfd (kept while the judge keeps the arena)
  int m_arena_id = 0;
  py::object m_session, m_model, m_last, m_timing;
  std::map<long, py::object> m_retained; // -1: the last timed call
  std::optional<long> m_fetched;         // the retained call the judge fetched last (dropped on release)
  struct pending_delivery {
    py::object output;
    bool parked = false;
    json extra;
  };
  std::optional<pending_delivery> m_pending; // outputs that asked for a larger arena
  long m_last_call = -1;
};

} // namespace

int run_runner(const runner_options& options) {
  const int fd = ::fcntl(options.socket_fd, F_DUPFD_CLOEXEC, 200);
  if (fd < 0) return 2;
  ::close(options.socket_fd);
  line_socket socket(fd);
  auto interpreter = start_interpreter();
  std::optional<runner> serve;
  try {
    py::module_ runtime = import_modules(python_role::runner);
    py::module_::import("torch").attr("set_grad_enabled")(false); // the runner never needs autograd
    if (options.device == device_kind::cuda) py::module_::import("torch").attr("cuda").attr("init")();
    serve.emplace(runtime, options.device, socket);
  } catch (const std::exception& e) {
    socket.send(
        failure("crashed", fmt::format("the runner could not start Python with torch: {}", e.what())));
    return 2;
  }
  // From here on the candidate's code may run: the filter goes on first (harness/exec/sandbox.hpp).
  std::string seccomp_error;
  const bool filtered = exec::install_candidate_seccomp(seccomp_error);
  socket.send({{"ok", true},
               {"ready", true},
               {"pid", ::getpid()},
               {"seccomp", filtered},
               {"seccomp_error", seccomp_error}});
  std::string line;
  while (socket.receive(line, std::chrono::hours(24)) == line_socket::status::line) {
    json reply;
    try {
      const json request = json::parse(line);
      if (request.value("op", "") == "quit") break;
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
