// An exclusive flock on a file, held for the life of the object (the file is made when missing): other kj
// processes that lock the same file wait. Released, and the descriptor closed, on every path.
#pragma once

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/file.h>
#include <unistd.h>

namespace kj::exec {

class file_lock {
public:
  explicit file_lock(const std::filesystem::path& file)
      : m_fd(::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    if (m_fd < 0) throw std::runtime_error("cannot open the lock " + file.string());
    while (::flock(m_fd, LOCK_EX) != 0)
      if (errno != EINTR) throw std::runtime_error("cannot lock " + file.string());
  }
  ~file_lock() { ::close(m_fd); }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

private:
  int m_fd;
};

} // namespace kj::exec
