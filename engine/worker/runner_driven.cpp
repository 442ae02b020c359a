// The parts of runner_link that serve rounds the judge drives call by call: a call bracketed by the judge's
// clock, a timed request, and the handshake's calibration at the runner's start.
#include "engine/worker/runner_link.hpp"

#include <chrono>

using nlohmann::json;

namespace kj::worker {
namespace {

constexpr int k_calibration_calls = 36;
constexpr int k_calibration_warmup = 4; // the first calls fault in the flush buffer and the code paths

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

} // namespace

namespace {

// On CUDA the judge polls for a timed request's reply without sleeping from 0.7 x its usual time on: a GPU
// machine has cores to spare (a 2-core CPU box has not), and a thread woken from a long sleep would add tens
// of microseconds to the bracket.
line_socket::spin_window spin_for(device_kind device, std::chrono::steady_clock::time_point start,
                                  double expected_ms) {
  if (device != device_kind::cuda) return {};
  const auto ms = [](double v) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::milli>(v));
  };
  return {start + ms(0.7 * expected_ms), start + ms(2 * expected_ms + 2)};
}

} // namespace

runner_link::go_reply runner_link::go(bool trace, double expected_ms) {
  go_reply reply;
  if (m_dead) {
    reply.sample = death();
    return reply;
  }
  const auto start = std::chrono::steady_clock::now();
  if (!m_socket->send({{"op", "tg"}, {"trace", trace}})) {
    reply.sample = died("tg");
    return reply;
  }
  reply.sample = next_reply("tg", spin_for(m_spec.device, start, expected_ms));
  reply.bracket_ms = ms_between(start, std::chrono::steady_clock::now());
  reply.after = reply.sample.value("ok", false) ? next_reply("tg") : reply.sample;
  return reply;
}

json runner_link::timed_request(const json& message, double& bracket_ms, double expected_ms) {
  const auto start = std::chrono::steady_clock::now();
  json reply;
  if (m_dead)
    reply = death();
  else if (!m_socket->send(message))
    reply = died(message.value("op", "?"));
  else
    reply = next_reply(message.value("op", "?"), spin_for(m_spec.device, start, expected_ms));
  bracket_ms = ms_between(start, std::chrono::steady_clock::now());
  return reply;
}

// The handshake's own cost, call by call, while only kj's code has run in the runner: what the judge's clock
// sees around a call beyond the runner's sample (an empty call), and around a prepare beyond its draw (the
// flush, the cache's on the host and a sync on CUDA: bounds the draw check on CUDA, and on both devices what
// of a prepare is given back to the candidate's clock). A failure here is recorded, never a verdict: the
// judge then bounds calls with a fixed allowance (driven_timing.cpp).
void runner_link::calibrate() {
  m_calibration = {};
  const json begun = exchange({{"op", "tb"}, {"subject", "calibration"}, {"flush", true}});
  if (!begun.value("ok", false)) {
    m_calibration.error = begun.value("error", std::string("the calibration round did not start"));
    return;
  }
  for (int i = 0; i < k_calibration_calls; ++i) {
    double prepare_ms = 0;
    const json prepared = timed_request({{"op", "tp"}}, prepare_ms);
    const go_reply call = go();
    if (!prepared.value("ok", false) || !call.sample.value("ok", false) || !call.after.value("ok", false)) {
      m_calibration = {{}, {}, "the calibration round failed: " + call.sample.value("error", std::string())};
      break;
    }
    if (i < k_calibration_warmup) continue;
    m_calibration.prepare_ms.push_back(prepare_ms - prepared.value("draw_ms", 0.0));
    m_calibration.go_ms.push_back(call.bracket_ms - call.sample.value("ms", 0.0));
  }
  const json ended = exchange({{"op", "te"}});
  if (!ended.value("ok", false) && m_calibration.error.empty())
    m_calibration = {{}, {}, "the calibration round did not end: " + ended.value("error", std::string())};
}

} // namespace kj::worker
