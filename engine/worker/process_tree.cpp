// The processes below the judge: listing them from /proc, their resident memory, killing them all, and how a
// process ended (bubblewrap's 128 + N exit codes included).
#include "engine/worker/process_tree.hpp"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fmt/core.h>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace kj::worker {

std::uint64_t resident_bytes(int pid) {
  std::ifstream statm(fmt::format("/proc/{}/statm", pid));
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::uint64_t proportional_bytes(int pid) {
  std::ifstream rollup(fmt::format("/proc/{}/smaps_rollup", pid));
  for (std::string line; std::getline(rollup, line);)
    if (line.starts_with("Pss:")) return std::stoull(line.substr(4)) * 1024; // "Pss:  1234 kB"
  return resident_bytes(pid);
}

// bubblewrap passes its child's end on as an exit code: the code itself, or 128 + the signal that killed it.
std::string describe_status(int status, bool sandboxed) {
  int signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (sandboxed && WIFEXITED(status) && WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 128 + NSIG)
    signal = WEXITSTATUS(status) - 128;
  if (signal != 0) return fmt::format("was killed by signal {} ({})", signal, ::strsignal(signal));
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

// The process that closed its socket is usually ending: its own status says how, where a kill would hide it.
int wait_briefly_then_kill(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 40; ++i) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    ::usleep(50'000);
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

void kill_all(const std::function<std::vector<int>()>& list) {
  for (int round = 0; round < 50; ++round) {
    const auto all = list();
    if (all.empty()) break;
    for (int pid : all)
      ::kill(pid, SIGKILL);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    ::usleep(2000);
  }
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

void kill_descendants(int root) {
  kill_all([root] { return exec::descendants(root); });
}

namespace {

std::mutex g_spares_mutex;
std::set<int> g_spares;

} // namespace

std::unique_lock<std::mutex> hold_spares() {
  return std::unique_lock<std::mutex>(g_spares_mutex);
}

void spare(int pid, bool waiting) {
  std::lock_guard lock(g_spares_mutex);
  spare_held(pid, waiting);
}

void spare_held(int pid, bool waiting) {
  waiting ? (void)g_spares.insert(pid) : (void)g_spares.erase(pid);
}

std::vector<int> tree_of(int root) {
  std::vector<int> out = exec::descendants(root);
  out.insert(out.begin(), root);
  return out;
}

std::vector<int> candidate_tree() {
  // One listing for every tree, under the lock a spare's launch holds from its fork until it is marked.
  std::lock_guard lock(g_spares_mutex);
  const auto parents = exec::process_parents();
  std::set<int> spared(g_spares.begin(), g_spares.end());
  for (int root : g_spares)
    for (int pid : exec::descendants(parents, root))
      spared.insert(pid);
  std::vector<int> out;
  for (int pid : exec::descendants(parents, ::getpid()))
    if (!spared.contains(pid)) out.push_back(pid);
  return out;
}

} // namespace kj::worker
