// Implements line_socket with poll(2) and non-blocking-free reads (the peer writes whole lines).
#include "engine/worker/line_socket.hpp"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kj::worker {

line_socket::~line_socket() {
  if (m_fd >= 0) ::close(m_fd);
  for (int fd : m_fds)
    ::close(fd);
}

int line_socket::take_fd() {
  if (m_fds.empty()) return -1;
  const int fd = m_fds.front();
  m_fds.pop_front();
  return fd;
}

namespace {

// The first bytes of a message, with a descriptor attached.
ssize_t send_with_fd(int socket, const std::string& data, int fd) {
  iovec io{const_cast<char*>(data.data()), data.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return ::sendmsg(socket, &msg, MSG_NOSIGNAL);
}

} // namespace

bool line_socket::send(const nlohmann::json& message, int pass_fd) {
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::size_t written = 0;
  if (pass_fd >= 0) {
    ssize_t n = -1;
    do
      n = send_with_fd(m_fd, line, pass_fd);
    while (n < 0 && errno == EINTR);
    if (n <= 0) return false;
    written = static_cast<std::size_t>(n);
  }
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
  return receive(line, timeout, spin_window{}, max_bytes);
}

line_socket::status line_socket::receive(std::string& line, std::chrono::milliseconds timeout,
                                         const spin_window& spin) {
  return receive(line, timeout, spin, 64 << 20);
}

line_socket::status line_socket::receive(std::string& line, std::chrono::milliseconds timeout,
                                         const spin_window& spin, std::size_t max_bytes) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + timeout;
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
    const auto now = clock::now();
    long long wait_ms = std::min<long long>(left.count(), 1000);
    const bool spinning = now >= spin.from && now < spin.until;
    if (spinning)
      wait_ms = 0; // spinning: poll without sleeping
    else if (now < spin.from)
      wait_ms = std::min<long long>(
          wait_ms, std::chrono::duration_cast<std::chrono::milliseconds>(spin.from - now).count());
    const int ready = ::poll(&pfd, 1, static_cast<int>(wait_ms));
    if (ready < 0 && errno != EINTR) return status::closed;
    if (ready <= 0) continue;
    iovec io{buffer, sizeof buffer};
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &io;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(m_fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return status::closed;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
        for (std::size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); ++i) {
          int fd = -1;
          std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
          m_fds.push_back(fd);
        }
    m_pending.append(buffer, static_cast<std::size_t>(n));
  }
}

} // namespace kj::worker
