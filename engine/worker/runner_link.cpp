// Implements runner_link: the runner's process (fork/exec of this binary), its handshake and replies (the
// arena: runner_arena.cpp; the two-stage start: runner_start.cpp; the watchdog: runner_watch.cpp).
#include "engine/worker/runner_link.hpp"

#include "engine/exec/process.hpp"
#include "engine/exec/sandbox.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <fstream>
#include <map>
#include <poll.h>
#include <pybind11/embed.h>
#include <set>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::worker {
namespace {

std::uint64_t half_the_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
}

// The runner speaks for the candidate: it may say its forward raised or could not load, never that kj failed
// (harness_error) or that the job timed out; an unknown kind is the candidate's runtime_error.
json sanitized(json reply) {
  if (reply.value("ok", true)) return reply;
  static const std::set<std::string> kinds{"runtime_error", "incorrect", "load_error", "compile_error",
                                           "problem_error"};
  const auto kind = reply.value("kind", std::string());
  if (!kinds.contains(kind)) reply["kind"] = "runtime_error";
  if (reply.value("reason", std::string()) != "out_of_memory") reply.erase("reason");
  return reply;
}

// The pool's `pause` around a calibration, undone on every way out.
class paused_neighbours {
public:
  explicit paused_neighbours(const std::function<void(bool)>& pause) : m_pause(pause) {
    if (m_pause) m_pause(true);
  }
  ~paused_neighbours() {
    if (m_pause) m_pause(false);
  }
  paused_neighbours(const paused_neighbours&) = delete;
  paused_neighbours& operator=(const paused_neighbours&) = delete;

private:
  const std::function<void(bool)>& m_pause;
};

} // namespace

std::vector<int> runner_link::processes() const {
  return m_waiting ? tree_of(m_pid) : candidate_tree();
}

void runner_link::kill_processes() {
  if (m_waiting) {
    const int root = m_pid;
    kill_all([root] { return tree_of(root); });
  } else {
    kill_all(candidate_tree);
  }
}

void runner_link::wait_for_candidate(bool waiting) {
  if (m_pid > 0 && waiting != m_waiting) spare(m_pid, waiting);
  m_waiting = waiting;
}

runner_link::runner_link(runner_spec spec, started_ahead_t) : m_spec(std::move(spec)), m_plugin(nullptr) {
  if (m_spec.limits.memory_bytes == 0) m_spec.limits.memory_bytes = half_the_memory();
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  m_waiting = true; // marked a spare the moment it exists (launch)
  launch();
  m_starter = std::thread(&runner_link::start_device_when_free, this);
}

bool runner_link::launched_like(const runner_spec& job) const {
  const std::uint64_t memory = job.limits.memory_bytes ? job.limits.memory_bytes : half_the_memory();
  return !m_dead && m_waiting && !job.import_on_device && job.device == m_spec.device &&
         memory == m_spec.limits.memory_bytes && job.limits.processes == m_spec.limits.processes &&
         job.limits.output_bytes == m_spec.limits.output_bytes && job.read_only == m_spec.read_only;
}

void runner_link::kill_for_test() const {
  if (m_pid <= 0) return;
  const int root =
      m_pid; // the runner and its sandbox, all gone before it is adopted: a runner that died waiting
  kill_all([root] { return tree_of(root); });
}

void runner_link::adopt(const runner_spec& job) {
  // The build's extensions, as files of the runner's own read-only folder: regular files and folders only (a
  // link the build step left points nowhere inside the sandbox, and is never followed here), each file linked
  // where the file system allows, else copied.
  std::error_code ec;
  if (!job.extensions.empty() && fs::is_directory(job.extensions, ec))
    for (auto it = fs::recursive_directory_iterator(job.extensions, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      const fs::path target = m_spec.extensions / fs::relative(it->path(), job.extensions);
      const fs::file_status status = it->symlink_status(ec);
      if (fs::is_directory(status)) {
        fs::create_directories(target, ec);
        fs::permissions(target, fs::perms(0755), ec);
      } else if (fs::is_regular_file(status)) {
        fs::create_hard_link(it->path(), target, ec);
        if (ec) fs::copy_file(it->path(), target, fs::copy_options::overwrite_existing, ec);
        fs::permissions(target, fs::perms(0444), fs::perm_options::add, ec); // readable by its uid
      }
      ec.clear();
    }
  m_spec.problem = job.problem;
  m_spec.candidate = job.candidate;
  m_spec.overrides = job.overrides;
  m_spec.protocol = job.protocol;
  m_spec.clock = job.clock;
  wait_for_candidate(false);
}

runner_link::runner_link(runner_spec spec, const cuda::plugin* plugin) : runner_link(std::move(spec)) {
  connect(plugin);
}

runner_link::runner_link(runner_spec spec) : m_spec(std::move(spec)), m_plugin(nullptr) {
  if (m_spec.limits.memory_bytes == 0) m_spec.limits.memory_bytes = half_the_memory();
  ::prctl(PR_SET_CHILD_SUBREAPER, 1); // what the candidate leaves behind becomes ours to kill
  launch();
}

void runner_link::connect(const cuda::plugin* plugin) {
  m_plugin = plugin;
  handshake();
}

void runner_link::start() {
  launch();
  handshake();
}

runner_link::~runner_link() {
  stop();
  free_arena();
  free_vault();
}

void runner_link::launch() {
  fs::create_directories(m_spec.scratch / "tmp");
  int sv[2], out[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 || ::pipe2(out, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("runner: socketpair/pipe: ") + std::strerror(errno));
  // Everything the child needs is built before fork: after it only async-signal-safe calls.
  std::map<std::string, std::string> env =
      m_spec.environment.empty() ? exec::scrubbed_environment() : m_spec.environment;
  env.erase("KJ_TEST_FAULT"); // the judge's fault injection (tests) is none of the candidate's business
  env["HOME"] = m_spec.scratch.string();
  env["TMPDIR"] = (m_spec.scratch / "tmp").string();
  env["KJ_SCRATCH_DIR"] = m_spec.scratch.string();
  env["TRITON_CACHE_DIR"] = (m_spec.scratch / "triton").string();
  env["TORCHINDUCTOR_CACHE_DIR"] = (m_spec.scratch / "inductor").string();
  if (!m_spec.extensions.empty()) env["TORCH_EXTENSIONS_DIR"] = m_spec.extensions.string();
  const bool cuda = m_spec.device == device_kind::cuda;
  const std::string dir = m_spec.scratch.string();
  exec::sandbox_policy policy{.scratch = m_spec.scratch, .read_only = m_spec.read_only, .gpu = cuda};
  policy.pid_namespace = m_share_fd; // CUDA IPC handles, the fallback, need kj's PID namespace
  const bool sandboxed = exec::sandbox_kind() == "bwrap";
  // A uid and gid of its own (kj as root): its scratch folder is handed to it, nothing else of kj's is.
  policy.identity = exec::next_identity(sandboxed);
  exec::hand_to(policy.identity, m_spec.scratch, true);
  if (policy.identity.own) env["KJ_SANDBOX_ID"] = policy.identity.text();
  std::vector<std::string> env_text;
  for (const auto& [k, v] : env)
    env_text.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_text)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  // Only what the runner runs of kj: its executable and, on CUDA, the timing plugin; never kj's folder (a
  // results DB or other candidates beside it would be readable from the sandbox).
  policy.read_only.push_back(exe);
  if (cuda) policy.read_only.emplace_back(cuda::plugin::default_path());
  if (const auto it = env.find("TORCH_EXTENSIONS_DIR"); it != env.end()) {
    (m_spec.import_on_device ? policy.writable : policy.read_only).emplace_back(it->second);
    if (m_spec.import_on_device) { // it compiles there: the folder is its own until the job ends
      m_writable_build = it->second;
      exec::hand_to(policy.identity, m_writable_build, true);
    }
  }
  std::vector<std::string> args = exec::plan_sandbox(policy).argv_prefix;
  m_sandboxed = !args.empty();
  const std::string program = args.empty() ? "/proc/self/exe" : args.front();
  args.push_back(args.empty() ? "kj" : exe);
  for (const char* a : {"runner", "--socket", "3", "--device"})
    args.emplace_back(a);
  args.push_back(to_string(m_spec.device));
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // On the CPU each process of the candidate also gets the memory limit as RLIMIT_DATA, so that an allocation
  // past it fails at once rather than between two samples of the watchdog. Not on CUDA: the driver maps host
  // memory in ways a data limit would break; the watchdog's sum over the processes holds there.
  const rlim_t data_limit = cuda ? RLIM_INFINITY : static_cast<rlim_t>(m_spec.limits.memory_bytes);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t parent = ::getpid();
  std::unique_lock<std::mutex> spares; // a spare is marked before anything lists the candidate's processes
  if (m_waiting) spares = hold_spares();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("runner: fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setsid(); // its own session and group: signals to kj's group do not reach it, and it cannot take over
                // ours
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(122);
    if (::dup2(null_fd, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(out[1], 2) < 0 || ::dup2(sv[1], 3) < 0)
      ::_exit(120);
    ::close_range(4, ~0U, 0);
    if (::chdir(dir.c_str()) != 0) ::_exit(123);
    const rlimit core{0, 0}, files{4096, 4096}, fsize{8ull << 30, 8ull << 30}, data{data_limit, data_limit};
    ::setrlimit(RLIMIT_CORE, &core);
    ::setrlimit(RLIMIT_DATA, &data);
    ::setrlimit(RLIMIT_NOFILE, &files);
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    ::execve(program.c_str(), argv.data(), envp.data());
    ::_exit(121);
  }
  ::close(null_fd);
  ::close(sv[1]);
  ::close(out[1]);
  m_pid = pid;
  if (m_waiting) spare_held(pid, true);
  if (spares.owns_lock()) spares.unlock();
  m_dead = false;
  m_death_reason.clear();
  m_socket = std::make_unique<line_socket>(sv[0]);
  m_stop_threads = false;
  m_device_started = m_stopped_by_freeze = m_frozen = false;
  m_first_line.clear();
  m_reader = std::thread(&runner_link::capture, this, out[0]);
  m_watchdog = std::thread(&runner_link::watch, this);
}

void runner_link::handshake() {
  m_charging = false; // the runner's start and the calibration are kj's own code
  json ready = first_words();
  m_failed_before_load = false;
  if (!ready.value("ok", false)) { // before the candidate is loaded, only kj's code has run: kj's failure
    m_failed_before_load = true;
    m_load = ready;
    m_load["kind"] = "harness_error";
    m_load.erase("reason");
    m_load["error"] = "kj's runner failed to start, before the candidate's code was loaded (a --timeout, "
                      "--memory-limit or --process-limit too small for kj itself?): " +
                      ready.value("error", std::string());
    return;
  }
  if (exec::have_seccomp() && !ready.value("seccomp", false)) { // never a candidate outside its filter
    m_load = {
        {"ok", false},
        {"kind", "harness_error"},
        {"error", "the candidate's process could not install its seccomp filter, so kj does not load the "
                  "candidate: " +
                      ready.value("seccomp_error", std::string())}};
    return;
  }
  {
    // Before the candidate is loaded: only kj's code has run in the runner. The next job's runner stands
    // still while it is measured.
    const paused_neighbours quiet(m_neighbours.pause);
    calibrate();
  }
  int status = 0;
  if (!m_dead && ::waitpid(m_pid, &status, WNOHANG) == m_pid) { // its sandbox ended: the runner follows it
    m_dead = true;
    m_calibration.error = "its sandbox " + describe_status(status, m_sandboxed);
  }
  if (m_dead) { // it died before the candidate was loaded (a runner started ahead can die waiting): kj's
    m_failed_before_load = true;
    m_load = {{"ok", false},
              {"kind", "harness_error"},
              {"error", "kj's runner died before the candidate was loaded: " + m_calibration.error}};
    return;
  }
  m_charging = true;
  m_load = exchange({{"op", "load"},
                     {"problem", m_spec.problem},
                     {"candidate", m_spec.candidate},
                     {"overrides", m_spec.overrides},
                     {"protocol", m_spec.protocol},
                     {"prebuilt", !m_spec.import_on_device}});
  if (m_load.value("ok", false)) {
    json arena;
    try {
      arena = grow_arena(k_first_arena);
    } catch (const cuda::plugin_error& e) {
      if (!m_share_fd) throw;
      // This device cannot export memory as a descriptor: the runner starts again in kj's PID namespace,
      // where CUDA IPC handles work (recorded with the evaluation).
      m_share_fd = false;
      m_isolation_note = std::string("no PID namespace for the runner: ") + e.what();
      if (m_neighbours.leaving_namespace) m_neighbours.leaving_namespace();
      restart();
      return;
    }
    if (!arena.value("ok", false)) m_load = arena;
  }
}

void runner_link::stop() {
  if (m_pid > 0) {
    if (!m_dead && m_socket) m_socket->send({{"op", "quit"}});
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    kill_processes();
    if (m_waiting) spare(m_pid, false);
    m_pid = -1;
  }
  end_starter(); // and m_stop_threads for the others
  if (m_watchdog.joinable()) m_watchdog.join();
  if (m_reader.joinable()) m_reader.join();
  m_socket.reset();
  if (!m_writable_build.empty()) exec::take_back(m_writable_build); // nothing of it changes any more
}

bool runner_link::restart() {
  stop();
  m_limit_broken.clear();
  free_arena();
  start();
  return m_load.value("ok", false);
}

json runner_link::exchange(const json& message, int pass_fd) {
  if (m_dead) return death();
  const std::string op = message.is_null() ? "start" : message.value("op", "?");
  if (!message.is_null() && !m_socket->send(message, pass_fd)) return died(op);
  return next_reply(op);
}

json runner_link::next_reply(const std::string& op, const line_socket::spin_window& spin) {
  if (m_dead) return death();
  std::string line;
  const auto allowance = std::exchange(m_allowance, std::chrono::microseconds{0});
  const judge_clock::wait waiting(*m_spec.clock, m_charging, allowance);
  for (;;) {
    const auto left = m_spec.clock->candidate_left() +
                      std::chrono::duration_cast<std::chrono::milliseconds>(allowance) +
                      std::chrono::milliseconds(1);
    const line_socket::status status =
        m_socket->receive(line, std::max(left, std::chrono::milliseconds(1)), spin);
    if (status == line_socket::status::closed) return died(op);
    if (status == line_socket::status::timed_out) {
      m_death_kind = "timeout";
      m_death_text =
          fmt::format("the candidate's process did not finish '{}' within its time limit: it used "
                      "{:.1f} s, all of the {:.0f} s it may (kj's own work, {:.1f} s so far, is not "
                      "counted)",
                      op, m_spec.clock->candidate_s(),
                      std::chrono::duration<double>(m_spec.clock->budget()).count(), m_spec.clock->own_s());
      break;
    }
    json reply;
    try {
      reply = json::parse(line);
    } catch (const json::exception&) {
    }
    if (reply.is_object() && reply.contains("ok")) return sanitized(std::move(reply));
    m_death_kind = "crashed";
    m_death_text = "the candidate's process answered '" + op + "' with something that is not a reply";
    break;
  }
  m_dead = true;
  ::kill(-m_pid, SIGKILL);
  kill_processes();
  if (const std::string out = output(); !out.empty()) m_death_text += "\n--- its output ---\n" + out;
  return death();
}

} // namespace kj::worker
