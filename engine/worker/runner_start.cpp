// A runner's start in two stages (docs/design.md, "Warm judges"): it imports Python and torch, says so
// ({"stage": "imported"}), and touches its device only after kj answers {"op": "start_device"}. A runner
// started ahead for the next candidate is answered by a thread of its link as soon as the judge is not
// timing, so that the CPU's part of its start overlaps a timing on the GPU and its device context never does.
#include "engine/worker/runner_link.hpp"

#include <csignal>
#include <utility>

using nlohmann::json;

namespace kj::worker {

void runner_link::start_device_when_free() {
  std::string line;
  // Polled, so that stop() is never kept waiting: a runner that dies closes the socket, one that stays silent
  // is found out by the handshake.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (;;) {
    if (m_stop_threads || std::chrono::steady_clock::now() > deadline) return;
    const auto status = m_socket->receive(line, std::chrono::milliseconds(500));
    if (status == line_socket::status::closed) return;
    if (status == line_socket::status::line) break;
  }
  std::unique_lock lock(m_gate_mutex);
  if (m_stop_threads) return;
  const json first = json::parse(line, nullptr, false);
  if (!first.is_object() || first.value("stage", "") != "imported") {
    m_first_line = line; // its failure to start, for the handshake to report
    return;
  }
  m_gate.wait(lock, [this] { return !m_frozen || m_stop_threads; });
  if (m_stop_threads) return;
  m_device_started = m_socket->send({{"op", "start_device"}});
}

json runner_link::first_words() {
  if (m_starter.joinable()) m_starter.join(); // a spare's: what its thread read and sent is done
  if (!m_first_line.empty()) {
    const json first = json::parse(std::exchange(m_first_line, {}), nullptr, false);
    return first.is_object() ? first : json{{"ok", false}, {"error", "kj's runner said something else"}};
  }
  const bool started = std::exchange(m_device_started, false);
  json first = exchange(json()); // the runner speaks first
  if (!started && first.value("stage", "") == "imported") first = exchange({{"op", "start_device"}});
  return first;
}

void runner_link::end_starter() {
  {
    const std::lock_guard lock(m_gate_mutex);
    m_stop_threads = true;
  }
  m_gate.notify_all();
  if (m_starter.joinable()) m_starter.join();
}

void runner_link::freeze(bool stopped) {
  if (m_pid <= 0 || m_dead) return;
  bool signal = true;
  {
    const std::lock_guard lock(m_gate_mutex);
    m_frozen = stopped;
    if (stopped) {
      // On CUDA a runner started ahead that has not started its device imports on the CPU beside a timing on
      // the GPU, and waits for the thaw before its device; on the CPU it would share the timed cores:
      // stopped.
      const bool importing = m_starter.joinable() && !m_device_started && m_first_line.empty();
      signal = !(importing && m_spec.device == device_kind::cuda);
      m_stopped_by_freeze = signal;
    } else {
      signal = std::exchange(m_stopped_by_freeze, false);
    }
  }
  if (!stopped) m_gate.notify_all();
  if (signal) stop_or_resume(stopped);
}

void runner_link::stop_or_resume(bool stopped) const {
  // Twice: a process that forked between the listing and its signal has its child listed the second time.
  for (int pass = 0; pass < 2; ++pass)
    for (int pid : processes())
      ::kill(pid, stopped ? SIGSTOP : SIGCONT);
}

void runner_link::pause(bool paused) {
  {
    const std::lock_guard lock(m_gate_mutex);
    if (m_pid <= 0 || m_dead || m_stopped_by_freeze) return; // freeze() holds it, and will let it go
  }
  stop_or_resume(paused);
}

} // namespace kj::worker
