// The worker's private report channel: JSON lines written to a non-inheritable pipe, never to stdout.
#pragma once

#include <mutex>
#include <nlohmann/json.hpp>

namespace kj::worker {

class result_channel {
public:
  // Takes over `fd`: moves it to a high, close-on-exec descriptor so compilers and shells the candidate
  // starts do not inherit it, and closes the original number.
  explicit result_channel(int fd);
  ~result_channel();
  result_channel(const result_channel&) = delete;
  result_channel& operator=(const result_channel&) = delete;

  // Writes one event as a line (whole, from any thread); a broken pipe (the orchestrator is gone) ends the
  // worker.
  void emit(const nlohmann::json& event);

private:
  int m_fd = -1;
  std::mutex m_lock;
};

} // namespace kj::worker
