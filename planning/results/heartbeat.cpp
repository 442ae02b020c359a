// Implements the heartbeat: a thread that prints what is in flight when kj has been silent for a while.
#include "planning/results/heartbeat.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <map>
#include <string>
#include <vector>

namespace kj::results {

heartbeat::heartbeat(progress_mode mode)
    : heartbeat(mode, default_interval(mode == progress_mode::log ? std::chrono::seconds(60)
                                                                  : std::chrono::seconds(30))) {}

heartbeat::heartbeat(progress_mode mode, std::chrono::milliseconds interval)
    : m_mode(mode), m_interval(interval) {
  if (m_mode != progress_mode::none) m_thread = std::thread([this] { loop(); });
}

heartbeat::~heartbeat() {
  {
    std::lock_guard lock(m_mutex);
    m_stop = true;
  }
  m_wake.notify_all();
  if (m_thread.joinable()) m_thread.join();
}

std::chrono::milliseconds heartbeat::default_interval(std::chrono::milliseconds fallback) {
  if (const char* env = std::getenv("KJ_HEARTBEAT_S"); env && *env) {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end && *end == '\0' && s >= 0.1 && s <= 86400)
      return std::chrono::milliseconds(static_cast<long long>(s * 1000));
    fmt::print(stderr,
               "kj: KJ_HEARTBEAT_S={} is not a number of seconds from 0.1 to 86400; every {} s instead\n",
               env, fallback.count() / 1000);
  }
  return fallback;
}

void heartbeat::begin(std::size_t planned, std::size_t /*skipped*/) {
  std::lock_guard lock(m_mutex);
  m_planned = planned;
  m_start = clock::now();
}

void heartbeat::evaluation(evaluation_result& result) {
  {
    std::lock_guard lock(m_mutex);
    ++m_done;
    ++m_tally[name_of(result.record.verdict)];
  }
  touch();
}

void heartbeat::started(bool build, const std::string& label, const std::string& slot) {
  std::lock_guard lock(m_mutex);
  const auto now = clock::now();
  m_running.emplace(now, job{build, label, slot, now});
}

void heartbeat::finished(bool build, const std::string& label, const std::string& slot) {
  std::lock_guard lock(m_mutex);
  for (auto it = m_running.begin(); it != m_running.end(); ++it)
    if (it->second.build == build && it->second.label == label && it->second.slot == slot) {
      m_running.erase(it);
      break;
    }
  if (build) ++m_builds_done;
}

void heartbeat::expect_builds(std::size_t planned) {
  std::lock_guard lock(m_mutex);
  m_builds_planned = planned;
  m_builds_done = 0; // a new phase: the candidates' builds, after the baselines' on the same scheduler
}

void heartbeat::touch() {
  std::lock_guard lock(m_mutex);
  if (m_mode != progress_mode::log) m_last_line = clock::now();
}

std::string heartbeat::status() const {
  std::string text;
  {
    std::lock_guard lock(m_mutex);
    const double elapsed = std::chrono::duration<double>(clock::now() - m_start).count();
    const double per_job = m_done > 0 ? elapsed / static_cast<double>(m_done) : 0;
    text = fmt::format("progress: {} of {} evaluations in {}", m_done, m_planned, clock_text(elapsed));
    if (!m_tally.empty()) text += " (" + tally_text(m_tally) + ")";
    if (per_job > 0)
      text +=
          fmt::format(", {:.1f}/min, ETA {}", 60 / per_job,
                      clock_text(per_job * static_cast<double>(m_planned > m_done ? m_planned - m_done : 0)));
  }
  const std::string running = line();
  return running.empty() ? text : text + " | " + running;
}

std::string heartbeat::line() const {
  std::lock_guard lock(m_mutex);
  const auto now = clock::now();
  std::vector<std::string> builds, judging;
  for (const auto& [since, j] : m_running) {
    const std::string age = clock_text(std::chrono::duration<double>(now - since).count());
    if (j.build)
      builds.push_back(fmt::format("{} ({})", j.label, age));
    else
      judging.push_back(fmt::format("judging {} on {}: {} so far", j.label, j.slot, age));
  }
  std::string text;
  if (!builds.empty()) {
    // builds no plan announced (the baselines', a cached build rebuilt after it failed to load): a count only
    text = m_builds_planned >= m_builds_done && m_builds_planned > 0
               ? fmt::format("compiling: {} of {} done; running", m_builds_done, m_builds_planned)
               : fmt::format("compiling: {} done; running", m_builds_done);
    for (std::size_t i = 0; i < builds.size(); ++i)
      text += (i ? ", " : " ") + builds[i];
  }
  for (const auto& j : judging)
    text += (text.empty() ? "" : " | ") + j;
  return text;
}

void heartbeat::loop() {
  std::unique_lock lock(m_mutex);
  while (!m_stop) {
    const auto due = m_last_line + m_interval;
    if (m_wake.wait_until(lock, due, [this] { return m_stop; })) break;
    if (clock::now() < m_last_line + m_interval) continue; // a line was printed meanwhile
    lock.unlock();
    const std::string text = m_mode == progress_mode::log ? status() : line();
    if (!text.empty()) fmt::print(stderr, "kj: {}\n", text);
    lock.lock();
    m_last_line = clock::now();
  }
}

} // namespace kj::results
