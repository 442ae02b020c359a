// A run is worked on by one kj at a time: a lock per run id, held while a process judges or extends it.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <sys/types.h>

namespace kj::orchestrator {

// An fcntl lock on a byte of `<db>.lock` chosen by the run id: the kernel releases it when its process ends
// (Ctrl-C, kill -9, a crash), so a lock is never stale; workers never inherit it. Local file systems only
// (a DB on NFS may not lock across hosts; shards write their own DBs anyway).
class run_lock {
public:
  // Takes the run's lock; throws kb::source_error naming the kj process that holds it.
  run_lock(const std::filesystem::path& db_path, const std::string& run_uid);
  ~run_lock();
  run_lock(const run_lock&) = delete;
  run_lock& operator=(const run_lock&) = delete;

  // The pid of the process holding the run's lock, if one does (read without taking it).
  static std::optional<pid_t> holder(const std::filesystem::path& db_path, const std::string& run_uid);

private:
  int m_fd = -1;
};

} // namespace kj::orchestrator
