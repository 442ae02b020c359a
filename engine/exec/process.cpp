// Implements worker process management: fork/exec, a private report pipe, deadlines, process-group kills.
#include "engine/exec/process.hpp"

#include "engine/exec/process_parts.hpp"
#include "engine/exec/quiet_builds.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/core.h>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdexcept>
#include <string_view>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

extern char** environ;

namespace kj::exec {
namespace {

std::atomic<bool> g_interrupted{false};

// pid -> parent pid of every process, from /proc/<pid>/stat. Read with read(2): a process that ends while it
// is read fails the read (ESRCH), which a stream would throw from (libstdc++'s filebuf underflow); it is
// skipped.
std::map<int, int> parents() {
  std::map<int, int> out;
  DIR* proc = ::opendir("/proc");
  if (!proc) return out;
  char text[1024];
  while (dirent* e = ::readdir(proc)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    const int fd = ::open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    const ssize_t n = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (n <= 0) continue;
    const std::string_view stat(text, static_cast<std::size_t>(n));
    const auto close = stat.rfind(')'); // the command name may hold spaces and parentheses
    if (close == std::string_view::npos || close + 4 >= stat.size()) continue;
    text[n] = '\0';
    int ppid = 0;
    std::sscanf(text + close + 2, "%*c %d", &ppid);
    out[pid] = ppid;
  }
  ::closedir(proc);
  return out;
}

void on_signal(int) {
  g_interrupted = true;
}

} // namespace

namespace detail {

// Everything the child needs is built before fork (kj has threads: after fork only async-signal-safe calls).
// A program named without a folder, looked up on the worker's PATH (execve does no lookup).
std::string find_program(const std::string& name, const std::map<std::string, std::string>& environment) {
  if (name.find('/') != std::string::npos) return name;
  const auto path = environment.find("PATH");
  std::string folders = path == environment.end() ? "/usr/local/bin:/usr/bin:/bin" : path->second;
  for (std::size_t start = 0; start <= folders.size();) {
    const std::size_t end = std::min(folders.find(':', start), folders.size());
    const fs::path candidate = fs::path(folders.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return name; // execve fails: the worker exits 121, which the caller reports
}

prepared_exec prepare(const worker_launch& launch) {
  prepared_exec p;
  // [bwrap ... --] [wrapper ...] kj worker ...: behind a launcher kj runs by its real path.
  p.args = launch.sandbox_prefix;
  p.args.insert(p.args.end(), launch.wrapper.begin(), launch.wrapper.end());
  if (p.args.empty()) {
    p.program = "/proc/self/exe";
    p.args = {"kj"};
  } else {
    if (launch.sandbox_prefix.empty()) p.args.front() = find_program(p.args.front(), launch.environment);
    p.program = p.args.front();
    p.args.push_back(fs::read_symlink("/proc/self/exe").string());
  }
  p.args.emplace_back("worker");
  if (launch.job_file.empty()) { // a judge that serves jobs one after another (warm_worker.hpp)
    p.args.emplace_back("--jobs-fd");
    p.args.emplace_back("4");
  } else {
    p.args.emplace_back("--job");
    p.args.push_back(launch.job_file.string());
  }
  p.args.emplace_back("--result-fd");
  p.args.emplace_back("3");
  for (const auto& [key, value] : launch.environment)
    p.env.push_back(key + "=" + value);
  for (auto& a : p.args)
    p.argv.push_back(a.data());
  p.argv.push_back(nullptr);
  for (auto& e : p.env)
    p.envp.push_back(e.data());
  p.envp.push_back(nullptr);
  return p;
}

[[noreturn]] void exec_worker(const worker_launch& launch, const prepared_exec& p, int report_fd, int log_fd,
                              int null_fd, pid_t kj, int jobs_fd) {
  ::setpgid(0, 0);
  // The worker dies with kj, even with a kill -9 of kj that runs no handler: nobody would read its report,
  // and a resumed run must not find it still building into the same folder or holding the GPU. (A sandboxed
  // worker is bwrap, which passes it on with --die-with-parent.)
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != kj) ::_exit(122); // kj was gone before the prctl
  if (log_fd < 0 || null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0 ||
      ::dup2(report_fd, 3) < 0 || (jobs_fd >= 0 && ::dup2(jobs_fd, 4) < 0))
    ::_exit(120);
  // Everything kj itself holds open (the DB, other workers' pipes, what kj's own parent passed on) stays out.
  const unsigned first_closed = jobs_fd >= 0 ? 5 : 4;
  if (::close_range(first_closed, ~0U, 0) != 0)
    for (unsigned fd = first_closed; fd < 65536; ++fd)
      ::close(static_cast<int>(fd));
  // A stop is kj's to make: a batch system's TERM (Slurm's scancel, requeue, time limit) reaches every
  // process of the job at once, and a runner it killed first would be a candidate "crashed" by kj's own stop.
  // Ignored here and in all the worker starts (runners, compilers: the disposition is inherited); kj, which
  // handles both, ends its workers with SIGKILL and records nothing for them.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  if (launch.nice > 0) { // beside timing: a core goes to it only when no judge or runner wants one
    (void)::nice(launch.nice);
    const sched_param idle{};
    (void)::sched_setscheduler(0, SCHED_IDLE, &idle); // inherited by its compilers
  }
  ::execve(p.program.c_str(), p.argv.data(), p.envp.data());
  ::_exit(121);
}

// `at`: [s] since the launch, when the line arrived (the clock's and quiet lines are not the worker's
// reports).
void handle_line(std::string_view line, worker_outcome& outcome,
                 const std::function<void(const nlohmann::json&)>& on_event, double at, quiet_hold& quiet) {
  if (line.empty()) return;
  try {
    auto event = nlohmann::json::parse(line);
    if (event.is_object() && event.value("type", "") == "clock") {
      outcome.clock = {true, event.value("candidate_s", 0.0), event.value("own_s", 0.0),
                       event.value("waiting", false)};
      return;
    }
    if (event.is_object() && event.value("type", "") == "quiet") {
      quiet.set(event.value("on", false));
      return;
    }
    if (outcome.events.empty() && outcome.first_event_s == 0) outcome.first_event_s = at;
    outcome.last_event_s = at;
    if (on_event) on_event(event);
    outcome.events.push_back(std::move(event));
  } catch (const nlohmann::json::exception&) {
    if (outcome.bad_lines.size() < 2000) outcome.bad_lines.append(line).append("\n");
  }
}

} // namespace detail

namespace {

bool has_secret_word(const std::string& name) {
  for (const char* word : {"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE"})
    if (name.find(word) != std::string::npos) return true;
  return false;
}

} // namespace

bool passes_scrub(const std::string& name) {
  static const char* const exact[] = {"PATH",
                                      "HOME",
                                      "USER",
                                      "LOGNAME",
                                      "LANG",
                                      "LANGUAGE",
                                      "TERM",
                                      "TZ",
                                      "TMPDIR",
                                      "LD_LIBRARY_PATH",
                                      "PYTHONPATH",
                                      "PYTHONHOME",
                                      "VIRTUAL_ENV",
                                      "CC",
                                      "CXX",
                                      "CFLAGS",
                                      "CXXFLAGS",
                                      "LDFLAGS",
                                      "MAX_JOBS",
                                      "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS",
                                      "OPENBLAS_NUM_THREADS",
                                      "XDG_CACHE_HOME",
                                      "SSL_CERT_FILE"};
  static const char* const prefixes[] = {"LC_",     "KJ_",           "CUDA_",    "CUDNN_",         "CUBLAS_",
                                         "NVIDIA_", "TORCH_",        "PYTORCH_", "TORCHINDUCTOR_", "TRITON_",
                                         "HF_",     "TRANSFORMERS_", "NCCL_",    "OMP_",           "KMP_",
                                         "MKL_"};
  if (has_secret_word(name)) return false;
  for (const char* e : exact)
    if (name == e) return true;
  for (const char* p : prefixes)
    if (name.starts_with(p)) return true;
  return false;
}

std::map<std::string, std::string> scrubbed_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    if (passes_scrub(name)) out[name] = entry.substr(eq + 1);
  }
  return out;
}

std::map<int, int> process_parents() {
  return parents();
}

std::vector<int> descendants(const std::map<int, int>& parent, int root) {
  std::multimap<int, int> children;
  for (const auto& [pid, ppid] : parent)
    children.emplace(ppid, pid);
  std::vector<int> out, queue{root};
  while (!queue.empty()) {
    const int p = queue.back();
    queue.pop_back();
    for (auto [it, end] = children.equal_range(p); it != end; ++it) {
      out.push_back(it->second);
      queue.push_back(it->second);
    }
  }
  return out;
}

std::vector<int> descendants(int root) {
  return descendants(parents(), root);
}

bool interrupt_requested() {
  return g_interrupted;
}

void request_interrupt() {
  g_interrupted = true;
}

void install_interrupt_handlers() {
  struct sigaction action{};
  action.sa_handler = on_signal;
  ::sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

worker_outcome run_worker_process(const worker_launch& launch,
                                  const std::function<void(const nlohmann::json&)>& on_event) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  const detail::prepared_exec prepared = detail::prepare(launch);
  const int log_fd = ::open(launch.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const auto start = std::chrono::steady_clock::now();
  const pid_t kj = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) detail::exec_worker(launch, prepared, fds[1], log_fd, null_fd, kj, -1);
  ::setpgid(pid, pid); // also in the parent, so that killpg works even before the child ran
  std::optional<quiet_builds::enrolled> build;
  if (launch.quiet_while_timing) build.emplace(pid);
  detail::quiet_hold quiet;
  quiet.allowed = launch.own_limit.count() > 0 && !launch.quiet_while_timing;
  ::close(fds[1]);
  if (log_fd >= 0) ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);

  worker_outcome outcome;
  std::string pending;
  char buffer[65536];
  bool open = true;
  bool reaped = false;
  int status = 0;
  while (open) {
    const auto now = std::chrono::steady_clock::now();
    // kj's own time (as the judge reports it) moves the deadline; it has a bound of its own
    const auto own = std::chrono::milliseconds(static_cast<std::int64_t>(outcome.clock.own_s * 1000));
    const auto stood_still = build ? build->stopped() : std::chrono::steady_clock::duration{};
    const auto deadline = start + launch.timeout + own + stood_still;
    outcome.own_overrun = launch.own_limit.count() > 0 && own > launch.own_limit;
    if (now >= deadline || outcome.own_overrun || g_interrupted) {
      (now >= deadline || outcome.own_overrun ? outcome.timed_out : outcome.interrupted) = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 200)));
    if (ready <= 0) {
      // A child the candidate forked may hold the pipe open after the worker itself is gone.
      if (::waitpid(pid, &status, WNOHANG) == pid) reaped = true, open = false;
      continue;
    }
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    pending.append(buffer, static_cast<std::size_t>(n));
    const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (std::size_t eol; (eol = pending.find('\n')) != std::string::npos; pending.erase(0, eol + 1))
      detail::handle_line(std::string_view(pending).substr(0, eol), outcome, on_event, at, quiet);
  }
  detail::handle_line(pending, outcome, on_event,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), quiet);
  quiet.set(false);
  ::close(fds[0]);
  while (!reaped && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-pid, SIGKILL); // anything the candidate left running in the group
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
  outcome.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (build) outcome.stood_still_s = std::chrono::duration<double>(build->stopped()).count();
  return outcome;
}

std::string file_tail(const std::filesystem::path& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t from = size > bytes ? size - bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string text(size - from, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

// How a worker ended, in a few words.
std::string describe_exit(const worker_outcome& outcome) {
  if (outcome.timed_out)
    return fmt::format("killed after {:.0f} s (the job's time limit)",
                       outcome.wall_s - outcome.stood_still_s);
  if (outcome.interrupted) return "interrupted by the user";
  if (outcome.term_signal)
    return fmt::format("killed by signal {} ({})", outcome.term_signal, ::strsignal(outcome.term_signal));
  return fmt::format("exited with code {}", outcome.exit_code);
}

} // namespace kj::exec
