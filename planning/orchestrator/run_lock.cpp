// Implements the per-run lock: one byte of `<db>.lock` per run id, locked with fcntl (a process's fcntl locks
// on a file go when it closes any descriptor of that file: kj holds one run lock at a time).
#include "planning/orchestrator/run_lock.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/core.h>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::orchestrator {
namespace {

fs::path lock_file(const fs::path& db_path) {
  return db_path.string() + ".lock";
}

// The byte of the run: the first 40 bits of its id's SHA-256 (collisions would only serialize two runs).
struct flock range_of(const std::string& run_uid, short type) {
  struct flock range {};
  range.l_type = type;
  range.l_whence = SEEK_SET;
  range.l_start = static_cast<off_t>(std::stoull(core::sha256_hex(run_uid).substr(0, 10), nullptr, 16));
  range.l_len = 1;
  return range;
}

} // namespace

run_lock::run_lock(const fs::path& db_path, const std::string& run_uid) {
  const fs::path file = lock_file(db_path);
  m_fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (m_fd < 0)
    throw kb::source_error(
        fmt::format("cannot lock run {}: cannot open {}: {}", run_uid, file.string(), std::strerror(errno)));
  struct flock range = range_of(run_uid, F_WRLCK);
  if (::fcntl(m_fd, F_SETLK, &range) == 0) return;
  const int error = errno;
  // Asked on this descriptor: opening another one and closing it would drop this process's own locks.
  struct flock probe = range_of(run_uid, F_WRLCK);
  const bool known = ::fcntl(m_fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK;
  ::close(m_fd);
  if (error == EACCES || error == EAGAIN)
    throw kb::source_error(fmt::format(
        "run {} is in use by another kj{}: wait for it to end (or stop it) before resuming the run", run_uid,
        known ? fmt::format(" (pid {})", probe.l_pid) : ""));
  throw kb::source_error(
      fmt::format("cannot lock run {} in {}: {}", run_uid, file.string(), std::strerror(error)));
}

run_lock::~run_lock() {
  if (m_fd >= 0) ::close(m_fd); // closing releases the lock
}

std::optional<pid_t> run_lock::holder(const fs::path& db_path, const std::string& run_uid) {
  const int fd = ::open(lock_file(db_path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct flock range = range_of(run_uid, F_WRLCK);
  const bool ok = ::fcntl(fd, F_GETLK, &range) == 0;
  ::close(fd);
  if (!ok || range.l_type == F_UNLCK) return std::nullopt;
  return range.l_pid;
}

} // namespace kj::orchestrator
