// Implements the wait for another process's database lock (see lock_wait.hpp).
#include "db/lock_wait.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::db::sqlite {
namespace {

// A process's command line, its arguments joined with spaces, cut at 80 characters.
std::string command_of(const fs::path& proc) {
  std::ifstream in(proc / "cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : text)
    if (c == '\0') c = ' ';
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

bool holds(const fs::path& proc, const std::string& db) {
  std::error_code ec;
  for (fs::directory_iterator fd(proc / "fd", ec), end; !ec && fd != end; fd.increment(ec)) {
    const std::string target = fs::read_symlink(fd->path(), ec).string();
    if (!ec && (target == db || target == db + "-wal" || target == db + "-shm")) return true;
    ec.clear();
  }
  return false;
}

} // namespace

double lock_wait_limit_s() {
  const char* text = std::getenv("KJ_DB_LOCK_WAIT_S");
  if (!text || !*text) return 300;
  char* end = nullptr;
  const double s = std::strtod(text, &end);
  if (*end == '\0' && s >= 0) return s;
  static std::once_flag warned;
  std::call_once(warned, [&] {
    fmt::print(stderr,
               "kj: warning: KJ_DB_LOCK_WAIT_S={}: not a number of seconds (0 or more); waiting 300 s\n",
               text);
  });
  return 300;
}

std::string lock_holders(const fs::path& db) {
  std::error_code ec;
  const std::string target = fs::weakly_canonical(db, ec).string();
  const std::string self = std::to_string(::getpid());
  std::string out;
  int found = 0;
  for (fs::directory_iterator proc("/proc", ec), end; !ec && proc != end; proc.increment(ec)) {
    const std::string pid = proc->path().filename().string();
    if (pid == self || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (!holds(proc->path(), target)) continue;
    if (++found <= 3)
      out += fmt::format("{}pid {} ({})", out.empty() ? "" : ", ", pid, command_of(proc->path()));
  }
  if (found > 3) out += fmt::format(" and {} more", found - 3);
  return out.empty() ? "another connection" : out;
}

std::string busy_hint(const fs::path& db) {
  return fmt::format(
      " (held by {}; kj waits up to {:.0f} s, KJ_DB_LOCK_WAIT_S sets how long; nothing already "
      "recorded is lost: run the command again once the other process is done, and a run resumes "
      "with what it had not recorded)",
      lock_holders(db), lock_wait_limit_s());
}

int wait_for_lock(void* arg, int count) {
  auto& w = *static_cast<lock_waiter*>(arg);
  const auto now = std::chrono::steady_clock::now();
  if (count == 0) {
    w.since = now;
    w.next_note = now + std::chrono::seconds(5);
  }
  const double waited = std::chrono::duration<double>(now - w.since).count();
  if (waited >= lock_wait_limit_s()) return 0;
  if (now >= w.next_note) {
    fmt::print(stderr,
               "kj: waiting for the database {}: its lock is held by {} ({:.0f} s so far; kj gives up "
               "after {:.0f} s, KJ_DB_LOCK_WAIT_S)\n",
               w.path, lock_holders(w.path), waited, lock_wait_limit_s());
    w.next_note = now + std::chrono::seconds(30);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(count < 10 ? 2 : 50));
  return 1;
}

} // namespace kj::db::sqlite
