// An exclusive flock on a file, held for the life of the object (the file is made when missing): other kj
// processes that lock the same file wait. Released, and the descriptor closed, on every path. The wait ends
// with lock_interrupted when Ctrl-C is pressed (interrupt_requested), whichever thread the signal reached.
#pragma once

#include "engine/exec/process.hpp"

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace kj::exec {

// Ctrl-C while waiting for a lock another kj process holds.
struct lock_interrupted : std::runtime_error {
  explicit lock_interrupted(const std::filesystem::path& file)
      : std::runtime_error("interrupted while waiting for the lock " + file.string()) {}
};

class file_lock {
public:
  explicit file_lock(const std::filesystem::path& file)
      : m_fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (m_fd < 0) throw std::runtime_error("cannot open the lock " + file.string());
    // Polled rather than blocking, so that Ctrl-C ends the wait (a signal interrupts only the thread it
    // reached, and kj waits on locks in several).
    while (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) {
        ::close(m_fd);
        throw std::runtime_error("cannot lock " + file.string());
      }
      if (interrupt_requested()) {
        ::close(m_fd);
        throw lock_interrupted(file);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~file_lock() { ::close(m_fd); }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

private:
  int m_fd;
};

} // namespace kj::exec
