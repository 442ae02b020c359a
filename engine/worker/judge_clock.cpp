// Implements the judge's clock: the candidate's waits charged, the rest kj's own, reported every half second.
#include "engine/worker/judge_clock.hpp"

#include <algorithm>

namespace kj::worker {

namespace {
std::int64_t ns_between(judge_clock::clock::time_point from, judge_clock::clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(to - from).count();
}
} // namespace

judge_clock::judge_clock(std::chrono::milliseconds budget, result_channel* channel,
                         std::chrono::milliseconds every)
    : m_budget(budget), m_every(every) {
  if (channel) m_thread = std::thread([this, channel] { loop(*channel); });
}

judge_clock::~judge_clock() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
}

judge_clock::wait::wait(judge_clock& c, bool charge, std::chrono::nanoseconds allowance)
    : m_clock(c), m_charge(charge), m_start(clock::now()),
      m_allowance(std::max(allowance, std::chrono::nanoseconds{0})) {
  // 1 ns at least: 0 means "not waiting"; the charge starts once the allowance is spent
  if (m_charge)
    m_clock.m_waiting_since_ns =
        std::max<std::int64_t>(1, ns_between(m_clock.m_made, m_start) + m_allowance.count());
}

judge_clock::wait::~wait() {
  if (!m_charge) return;
  m_clock.m_charged_ns += std::max<std::int64_t>(0, ns_between(m_start, clock::now()) - m_allowance.count());
  m_clock.m_waiting_since_ns = 0;
}

void judge_clock::refund(double ms) {
  if (!(ms > 0)) return;
  const auto ns = static_cast<std::int64_t>(ms * 1e6);
  std::int64_t charged = m_charged_ns;
  while (!m_charged_ns.compare_exchange_weak(charged, std::max<std::int64_t>(0, charged - ns))) {
  }
}

double judge_clock::candidate_s() const {
  std::int64_t ns = m_charged_ns;
  if (const std::int64_t since = m_waiting_since_ns; since > 0)
    ns += std::max<std::int64_t>(0, ns_between(m_made, clock::now()) - since);
  return static_cast<double>(ns) * 1e-9;
}

double judge_clock::own_s() const {
  return std::max(0.0, std::chrono::duration<double>(clock::now() - m_made).count() - candidate_s());
}

std::chrono::milliseconds judge_clock::candidate_left() const {
  const auto used = std::chrono::milliseconds(static_cast<std::int64_t>(candidate_s() * 1000));
  return std::max(std::chrono::milliseconds(0), m_budget - used);
}

nlohmann::json judge_clock::report() const {
  return {{"type", "clock"},
          {"candidate_s", candidate_s()},
          {"own_s", own_s()},
          {"waiting", m_waiting_since_ns.load() > 0}};
}

void judge_clock::loop(result_channel& channel) {
  while (!m_stop) {
    channel.emit(report());
    for (auto slept = std::chrono::milliseconds(0); slept < m_every && !m_stop;
         slept += std::chrono::milliseconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace kj::worker
