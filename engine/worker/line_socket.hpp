// One end of the judge-runner socket: JSON messages as lines, with a deadline on reads; a message may carry a
// file descriptor (SCM_RIGHTS: the judge hands the runner its CPU arena, a memfd that has no path).
#pragma once

#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kj::worker {

class line_socket {
public:
  explicit line_socket(int fd) : m_fd(fd) {}
  ~line_socket();
  line_socket(const line_socket&) = delete;
  line_socket& operator=(const line_socket&) = delete;

  // False when the peer is gone. `pass_fd` >= 0 travels with the message.
  bool send(const nlohmann::json& message, int pass_fd = -1);
  enum class status { line, closed, timed_out };
  // Waits up to `timeout` for a whole line (lines over `max_bytes` end the connection: closed).
  status receive(std::string& line, std::chrono::milliseconds timeout, std::size_t max_bytes = 64 << 20);
  // Between `spin_from` and `spin_until` the wait polls without sleeping (a timed call's reply, on a GPU
  // machine: a thread woken from a long sleep adds tens of microseconds to the judge's bracket); before and
  // after it sleeps in poll(2) as receive does.
  struct spin_window {
    std::chrono::steady_clock::time_point from, until;
  };
  status receive(std::string& line, std::chrono::milliseconds timeout, const spin_window& spin);
  int fd() const { return m_fd; }
  // The oldest descriptor received with a message and not yet taken (the caller owns it), or -1.
  int take_fd();

private:
  status receive(std::string& line, std::chrono::milliseconds timeout, const spin_window& spin,
                 std::size_t max_bytes);
  int m_fd;
  std::string m_pending;
  std::deque<int> m_fds;
};

} // namespace kj::worker
