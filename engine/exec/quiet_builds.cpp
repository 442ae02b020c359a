// Implements quiet_builds: a table of enrolled build workers, stopped and continued as timing slots come and
// go.
#include "engine/exec/quiet_builds.hpp"

#include "engine/exec/process.hpp"

#include <map>
#include <mutex>
#include <signal.h>

namespace kj::exec {
namespace {

using clock = std::chrono::steady_clock;

struct build_entry {
  clock::duration stopped{};
  clock::time_point since{}; // while stopped
};

struct table {
  std::mutex mutex;
  int holds = 0;
  std::map<pid_t, build_entry> builds;
};

table& the_table() {
  static table t;
  return t;
}

// The group first (a process that forks meanwhile is caught by the second pass), then every descendant: a
// stopped process forks no more, so two passes over the tree reach what the first one missed.
void signal_tree(pid_t root, int signal) {
  ::kill(-root, signal);
  ::kill(root, signal);
  for (int pass = 0; pass < 2; ++pass)
    for (int pid : descendants(root))
      ::kill(pid, signal);
}

} // namespace

namespace quiet_builds {

void hold() {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  if (t.holds++ > 0) return;
  const auto now = clock::now();
  for (auto& [root, entry] : t.builds) {
    signal_tree(root, SIGSTOP);
    entry.since = now;
  }
}

void release() {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  if (t.holds == 0 || --t.holds > 0) return;
  const auto now = clock::now();
  for (auto& [root, entry] : t.builds) {
    signal_tree(root, SIGCONT);
    entry.stopped += now - entry.since;
  }
}

int holds() {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  return t.holds;
}

enrolled::enrolled(pid_t root) : m_root(root) {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  build_entry& entry = t.builds[root];
  if (t.holds == 0) return;
  signal_tree(root, SIGSTOP);
  entry.since = clock::now();
}

enrolled::~enrolled() {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  if (t.holds > 0) signal_tree(m_root, SIGCONT); // what is left of it is killed next: let it go
  t.builds.erase(m_root);
}

clock::duration enrolled::stopped() const {
  table& t = the_table();
  std::lock_guard lock(t.mutex);
  const auto it = t.builds.find(m_root);
  if (it == t.builds.end()) return {};
  return it->second.stopped + (t.holds > 0 ? clock::now() - it->second.since : clock::duration{});
}

} // namespace quiet_builds
} // namespace kj::exec
