// Implements the cold measurement loop as named steps, after nvbench's measure_cold.
#include "timing/measure.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace kj::timing {

cold_measurement::cold_measurement(timed_subject& subject, const measure_params& params)
    : m_subject(subject), m_params(params), m_rule(params.stopping) {
  if (m_params.warmup_max_calls < m_params.warmup_min_calls) {
    throw std::invalid_argument("measure_params: warmup_max_calls is below warmup_min_calls");
  }
  m_result.params = params.stopping;
}

measurement cold_measurement::run() {
  if (m_ran) throw std::logic_error("cold_measurement::run: already run; make a new one per measurement");
  m_ran = true;
  run_warmup();
  run_trials();
  generate_summary();
  return std::move(m_result);
}

double cold_measurement::take_sample() {
  m_subject.prepare();
  m_subject.flush();
  m_subject.start();
  m_subject.call();
  return m_subject.stop_ms();
}

// warmup_min_ms of the samples' time or of the wall clock, whichever comes first: a subject much shorter than
// its flush and preparation (an empty forward, a tiny kernel on the CPU) warmed up 1000 times before.
void cold_measurement::run_warmup() {
  const auto start = host_clock::now();
  const auto warm_enough = [&] {
    return std::max(m_result.warmup_ms, elapsed_ms(start, host_clock::now())) >= m_params.warmup_min_ms;
  };
  while (m_result.warmup_calls < m_params.warmup_min_calls ||
         (!warm_enough() && m_result.warmup_calls < m_params.warmup_max_calls)) {
    m_result.warmup_ms += take_sample();
    ++m_result.warmup_calls;
  }
}

void cold_measurement::run_trials() {
  const auto start = host_clock::now();
  while (!m_rule.done()) {
    m_rule.add(take_sample());
    if (!m_rule.done() && elapsed_ms(start, host_clock::now()) >= m_params.max_wall_ms) {
      m_result.stop_reason = "wall_timeout";
      return;
    }
  }
  m_result.stop_reason = m_rule.reason();
}

void cold_measurement::generate_summary() {
  m_result.samples_ms = m_rule.samples();
  m_result.stats = summarize(m_result.samples_ms, m_params.stopping.confidence);
}

measurement measure_cold(timed_subject& subject, const measure_params& params) {
  return cold_measurement(subject, params).run();
}

host_subject::host_subject(std::function<void()> function, std::size_t flush_bytes,
                           std::function<void()> prepare)
    : m_function(std::move(function)), m_prepare(std::move(prepare)), m_flusher(flush_bytes) {
  if (!m_function) throw std::invalid_argument("host_subject: the function is empty");
}

} // namespace kj::timing
