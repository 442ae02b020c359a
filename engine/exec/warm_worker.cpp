// Implements warm_worker: the judge's process, its job socket and its report pipe, one job at a time.
#include "engine/exec/warm_worker.hpp"

#include "engine/exec/process_parts.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/core.h>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::exec {
namespace {

// The end of a log from `offset` on: what this job's judge printed (earlier jobs' output is not its).
std::string tail_from(const fs::path& path, std::uintmax_t offset, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::uintmax_t>(in.tellg());
  const std::uintmax_t from = std::max(offset, size > bytes ? size - bytes : 0);
  if (from >= size) return "";
  in.seekg(static_cast<std::streamoff>(from));
  std::string text(size - from, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

std::uintmax_t size_of(const fs::path& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  return ec ? 0 : size;
}

} // namespace

warm_worker::~warm_worker() {
  stop();
}

void warm_worker::start(const launch_spec& launch) {
  static std::atomic<unsigned> sequence{0};
  m_home = m_runner.cache_dir / "scratch" / fmt::format("judge-{}-{}", ::getpid(), sequence++);
  fs::remove_all(m_home);
  fs::create_directories(m_home);
  m_log = m_home / "worker.log";
  worker_launch worker;
  worker.wrapper = launch.wrapper;
  const fs::path extensions = m_runner.cache_dir / "torch_extensions"; // each job names its own
  fs::create_directories(extensions);
  worker.environment = worker_environment(m_runner.cache_dir, m_home, extensions, launch.environment);
  int events[2], jobs[2];
  if (::pipe2(events, O_CLOEXEC) != 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, jobs) != 0)
    throw std::runtime_error(std::string("warm judge: pipe: ") + std::strerror(errno));
  const detail::prepared_exec prepared = detail::prepare(worker);
  const int log_fd = ::open(m_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const pid_t kj = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("warm judge: fork: ") + std::strerror(errno));
  if (pid == 0) detail::exec_worker(worker, prepared, events[1], log_fd, null_fd, kj, jobs[1]);
  ::setpgid(pid, pid);
  ::close(events[1]);
  ::close(jobs[1]);
  if (log_fd >= 0) ::close(log_fd);
  if (null_fd >= 0) ::close(null_fd);
  m_pid = pid;
  m_events_fd = events[0];
  m_jobs_fd = jobs[0];
  m_pending.clear();
  m_environment = launch.environment;
  m_wrapper = launch.wrapper;
  ++m_starts;
}

void warm_worker::ended(worker_outcome& outcome) {
  int status = 0;
  // It closed its report pipe: it is ending, and its own status says how; one that does not end is killed.
  bool reaped = false;
  for (int i = 0; i < 40 && !reaped; ++i) {
    const pid_t r = ::waitpid(m_pid, &status, WNOHANG);
    reaped = r == m_pid || (r < 0 && errno != EINTR);
    if (!reaped) ::usleep(50'000);
  }
  ::kill(-m_pid, SIGKILL); // anything left in its group
  if (!reaped)
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
  ::close(m_events_fd);
  ::close(m_jobs_fd);
  m_pid = -1;
  m_events_fd = m_jobs_fd = -1;
}

void warm_worker::stop() {
  if (m_pid > 0) {
    ::shutdown(m_jobs_fd, SHUT_RDWR); // no more jobs: it ends by itself
    worker_outcome ignored;
    ended(ignored);
  }
  remove_home();
}

void warm_worker::remove_home() {
  std::error_code ec;
  if (!m_home.empty() && !m_runner.keep_scratch) fs::remove_all(m_home, ec);
  m_home.clear();
}

bool warm_worker::gone() {
  int status = 0;
  return m_pid > 0 && ::waitpid(m_pid, &status, WNOHANG) == m_pid;
}

worker_outcome warm_worker::run(const job& message, const launch_spec& launch, std::string* log_tail,
                                const std::function<void(const nlohmann::json&)>& on_event) {
  if (m_pid > 0 && (launch.environment != m_environment || launch.wrapper != m_wrapper)) stop();
  if (m_pid > 0 && gone()) { // it ended between jobs (killed, or it could not make itself fresh again)
    ::close(m_events_fd);
    ::close(m_jobs_fd);
    m_pid = m_events_fd = m_jobs_fd = -1;
  }
  const bool fresh = m_pid <= 0;
  if (fresh) {
    remove_home(); // a judge that ended badly left its folder
    start(launch);
  }
  bool reached = false;
  worker_outcome outcome = attempt(message, launch, log_tail, on_event, reached);
  // A judge that was warm and took the job but answered nothing ended before the job began (it died while it
  // waited): kj's, never the candidate's; a fresh judge takes the job.
  if (!fresh && !reached && !outcome.timed_out && !outcome.interrupted) {
    remove_home();
    start(launch);
    outcome = attempt(message, launch, log_tail, on_event, reached);
  }
  return outcome;
}

worker_outcome warm_worker::attempt(const job& message, const launch_spec& launch, std::string* log_tail,
                                    const std::function<void(const nlohmann::json&)>& on_event,
                                    bool& reached) {
  // The job's file, with the folder of the candidate's built extensions (job_runner points a worker of its
  // own there through TORCH_EXTENSIONS_DIR).
  job copy = message;
  if (auto* evaluation = std::get_if<evaluate_job>(&copy); evaluation && !launch.build_dir.empty()) {
    fs::create_directories(launch.build_dir / "ext");
    evaluation->extensions_dir = (launch.build_dir / "ext").string();
  }
  const fs::path job_file = m_home / fmt::format("job-{}.json", m_jobs++);
  {
    std::ofstream out(job_file);
    out << to_json(copy).dump();
  }
  const std::uintmax_t log_start = size_of(m_log);
  const std::string line = job_file.string() + "\n";
  const auto start = std::chrono::steady_clock::now();
  worker_outcome outcome;
  detail::quiet_hold quiet;
  quiet.allowed = launch.own_limit.count() > 0 && !launch.quiet_while_timing;
  m_pending.clear();
  bool done = false;
  bool open = ::send(m_jobs_fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size());
  const auto since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  char buffer[65536];
  while (open && !done) {
    const auto now = std::chrono::steady_clock::now();
    const auto own = std::chrono::milliseconds(static_cast<std::int64_t>(outcome.clock.own_s * 1000));
    const auto deadline = start + launch.timeout + own;
    outcome.own_overrun = launch.own_limit.count() > 0 && own > launch.own_limit;
    if (now >= deadline || outcome.own_overrun || interrupt_requested()) {
      (now >= deadline || outcome.own_overrun ? outcome.timed_out : outcome.interrupted) = true;
      ::kill(-m_pid, SIGKILL);
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    pollfd pfd{m_events_fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 200))) <= 0) continue;
    const ssize_t n = ::read(m_events_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reached = true;
    m_pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t eol; !done && (eol = m_pending.find('\n')) != std::string::npos;
         m_pending.erase(0, eol + 1)) {
      const std::string_view text = std::string_view(m_pending).substr(0, eol);
      if (text == R"({"type":"job_end"})") {
        done = true;
        continue;
      }
      detail::handle_line(text, outcome, on_event, since_start(), quiet);
    }
  }
  quiet.set(false);
  if (done) {
    outcome.exit_code = 0;
  } else { // it ended, or was ended: a fresh judge takes the next job
    if (!m_pending.empty()) detail::handle_line(m_pending, outcome, on_event, since_start(), quiet);
    ended(outcome);
  }
  outcome.wall_s = since_start();
  if (log_tail) *log_tail = tail_from(m_log, log_start, launch.log_tail_bytes);
  std::error_code ec;
  if (!m_runner.keep_scratch) fs::remove(job_file, ec);
  return outcome;
}

} // namespace kj::exec
