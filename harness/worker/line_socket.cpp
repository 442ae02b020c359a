// Implements line_socket with poll(2) and non-blocking-free reads (the peer writes whole lines).
#include "harness/worker/line_socket.hpp"

#include <cerrno>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kj::worker {

line_socket::~line_socket() {
  if (m_fd >= 0) ::close(m_fd);
}

bool line_socket::send(const nlohmann::json& message) {
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = ::send(m_fd, line.data() + written, line.size() - written, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

line_socket::status line_socket::receive(std::string& line, std::chrono::milliseconds timeout,
                                         std::size_t max_bytes) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[65536];
  while (true) {
    if (const auto eol = m_pending.find('\n'); eol != std::string::npos) {
      line = m_pending.substr(0, eol);
      m_pending.erase(0, eol + 1);
      return status::line;
    }
    if (m_pending.size() > max_bytes) return status::closed;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return status::timed_out;
    pollfd pfd{m_fd, POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR) return status::closed;
    if (ready <= 0) continue;
    const ssize_t n = ::read(m_fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return status::closed;
    m_pending.append(buffer, static_cast<std::size_t>(n));
  }
}

} // namespace kj::worker
