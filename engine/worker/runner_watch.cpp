// The runner's watchdog (its processes' memory and count against the limits) and the capture of what it
// prints (head and tail kept, the rest counted): the parts of runner_link that run on threads of their own;
// and what its death says (a broken limit named, its output attached).
#include "engine/worker/runner_link.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <fmt/core.h>
#include <poll.h>
#include <string_view>
#include <unistd.h>

using nlohmann::json;

namespace kj::worker {

void runner_link::watch() {
  while (!m_stop_threads) {
    // A fork bomb makes a few hundred processes in 200 ms; RLIMITs and cgroups cap the rest. Waking every
    // 20 ms to look whether it should stop, it ends with its runner at once (a warm judge's next job waits).
    for (int i = 0; i < 10 && !m_stop_threads; ++i)
      ::usleep(20'000);
    if (m_stop_threads) break;
    if (m_dead || m_pid <= 0) continue;
    // Everything below the judge: the runner, its children, and orphans reparented to us (the subreaper);
    // a runner waiting for its candidate (runner_pool) watches only its own tree.
    const auto tree = processes();
    std::uint64_t rss = 0;
    for (int pid : tree)
      rss += resident_bytes(pid);
    // Resident sizes count a page shared by forked children once per child: over the limit, the processes'
    // proportional sizes (a shared page counted once) decide (reading them costs more: only then).
    if (rss > m_spec.limits.memory_bytes) {
      std::uint64_t pss = 0;
      for (int pid : tree)
        pss += proportional_bytes(pid);
      rss = std::min(rss, pss);
    }
    if (rss > m_peak_rss) m_peak_rss = rss;
    std::string broken;
    if (rss > m_spec.limits.memory_bytes)
      broken = fmt::format("oom: its processes held {} MiB of host memory (shared pages counted once), over "
                           "the limit of {} MiB",
                           rss >> 20, m_spec.limits.memory_bytes >> 20);
    else if (static_cast<int>(tree.size()) > m_spec.limits.processes)
      broken = fmt::format("processes: it started more than {} processes", m_spec.limits.processes);
    if (broken.empty()) continue;
    {
      std::lock_guard lock(m_limit_mutex);
      m_limit_broken = broken;
    }
    ::kill(-m_pid, SIGKILL);
    ::kill(m_pid, SIGKILL);
    for (int pid : tree)
      ::kill(pid, SIGKILL);
  }
}

void runner_link::capture(int fd) {
  char buffer[65536];
  const std::size_t half = m_spec.limits.output_bytes / 2;
  while (true) {
    pollfd pfd{fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, 100);
    if (ready == 0) {
      if (m_stop_threads) break; // a descendant that escaped the kill may hold the pipe: do not wait for it
      continue;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    std::lock_guard lock(m_output_mutex);
    m_output_total += static_cast<std::uint64_t>(n);
    std::string_view chunk(buffer, static_cast<std::size_t>(n));
    if (m_head.size() < half) {
      const std::size_t take = std::min(half - m_head.size(), chunk.size());
      m_head.append(chunk.substr(0, take));
      chunk.remove_prefix(take);
    }
    m_tail.append(chunk);
    if (m_tail.size() > 2 * half) m_tail.erase(0, m_tail.size() - half);
  }
  ::close(fd);
}

std::string runner_link::output() const {
  std::lock_guard lock(m_output_mutex);
  const std::size_t half = m_spec.limits.output_bytes / 2;
  std::string tail = m_tail.size() > half ? m_tail.substr(m_tail.size() - half) : m_tail;
  const std::uint64_t shown = m_head.size() + tail.size();
  if (shown >= m_output_total) return m_head + tail;
  return m_head + fmt::format("\n[... {} bytes of output not kept ...]\n", m_output_total - shown) + tail;
}

json runner_link::died(const std::string& during) {
  const int status = wait_briefly_then_kill(m_pid);
  ::kill(-m_pid, SIGKILL); // what it started in its group goes with it
  kill_processes();
  m_dead = true;
  std::string limit;
  {
    std::lock_guard lock(m_limit_mutex);
    limit = m_limit_broken;
  }
  // Past its memory limit the candidate failed at run time, as an allocation that fails in-process does.
  m_death_kind = limit.rfind("oom", 0) == 0 ? "runtime_error" : "crashed";
  m_death_reason = limit.rfind("oom", 0) == 0 ? "out_of_memory" : "";
  m_death_text = limit.empty()
                     ? fmt::format("the candidate's process {} during '{}'",
                                   describe_status(status, m_sandboxed), during)
                     : fmt::format("the candidate's process was killed during '{}': {}", during, limit);
  if (const std::string out = output(); !out.empty()) m_death_text += "\n--- its output ---\n" + out;
  return death();
}

json runner_link::death() const {
  json reply{{"ok", false}, {"kind", m_death_kind}, {"error", m_death_text}};
  if (!m_death_reason.empty()) reply["reason"] = m_death_reason;
  return reply;
}

} // namespace kj::worker
