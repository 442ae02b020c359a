// Waiting for another process's lock on a database: a line on stderr while kj waits (naming the processes
// that hold the file open), and a hint in the error when it gives up.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace kj::db::sqlite {

// SQLite's busy handler state of one connection (sqlite3_busy_handler's argument).
struct lock_waiter {
  std::string path;
  std::chrono::steady_clock::time_point since; // the current wait's start
  std::chrono::steady_clock::time_point next_note;
};

// The busy handler: sleeps a little and returns 1 (try again) until KJ_DB_LOCK_WAIT_S seconds (default 300)
// have passed, then 0 (SQLite returns SQLITE_BUSY); after 5 s of waiting, and every 30 s after, a line on
// stderr says who holds the file.
int wait_for_lock(void* waiter, int count);

// The other processes that hold `db` (or its -wal/-shm) open, e.g. "pid 4242 (kj run --run-id a ...)", or
// "another connection" when none is found (this process, or /proc cannot be read).
std::string lock_holders(const std::filesystem::path& db);

// The seconds kj waits for a lock (KJ_DB_LOCK_WAIT_S, default 300).
double lock_wait_limit_s();

// What an error of a busy database adds: who holds it, how long kj waited, and that nothing was lost.
std::string busy_hint(const std::filesystem::path& db);

} // namespace kj::db::sqlite
