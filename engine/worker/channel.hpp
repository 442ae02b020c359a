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

// While it lives, kj's own builds stand still (engine/exec/quiet_builds.hpp): the judge says so on its
// channel
// ("quiet" lines) when a timed phase begins and ends, and gives the orchestrator a moment to stop them.
class quiet_host {
public:
  explicit quiet_host(result_channel& channel);
  ~quiet_host();
  quiet_host(const quiet_host&) = delete;
  quiet_host& operator=(const quiet_host&) = delete;

private:
  result_channel& m_channel;
};

} // namespace kj::worker
