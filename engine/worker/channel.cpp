// Implements the worker's result channel.
#include "engine/worker/channel.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>

namespace kj::worker {

result_channel::result_channel(int fd) {
  m_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 200);
  if (m_fd < 0) throw std::runtime_error("result channel: descriptor " + std::to_string(fd) + " is not open");
  ::close(fd);
}

result_channel::~result_channel() {
  if (m_fd >= 0) ::close(m_fd);
}

void result_channel::emit(const nlohmann::json& event) {
  std::string line = event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  const std::lock_guard hold(m_lock);
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::write(m_fd, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(3); // nobody is listening any more
    written += static_cast<std::size_t>(n);
  }
}

quiet_host::quiet_host(result_channel& channel) : m_channel(channel) {
  m_channel.emit({{"type", "quiet"}, {"on", true}});
  // The orchestrator reads the line at once and stops the builds' processes: a few milliseconds at most; the
  // first timed calls are warmups anyway.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

quiet_host::~quiet_host() {
  m_channel.emit({{"type", "quiet"}, {"on", false}});
}

} // namespace kj::worker
