// Implements the adaptive stopping rule.
#include "timing/stopping_rule.hpp"

#include "timing/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kj::timing {

namespace {

// Below this many samples every sample is checked; above, checks are n / k_check_divisor samples apart.
constexpr std::size_t k_check_divisor = 16;

void validate(const stopping_params& p) {
  auto fail = [](const char* what) { throw std::invalid_argument(std::string("stopping_params: ") + what); };
  if (!(p.confidence > 0.0 && p.confidence < 1.0)) fail("confidence must be in (0, 1)");
  if (p.max_samples == 0) fail("max_samples must be at least 1");
  if (p.min_samples > p.max_samples) fail("min_samples exceeds max_samples, so the run could never converge");
  if (!(p.target_rel_ci >= 0.0)) fail("target_rel_ci must be >= 0");
  if (!(p.min_time_ms >= 0.0) || !(p.max_time_ms > 0.0)) fail("min_time_ms must be >= 0, max_time_ms > 0");
  if (p.min_time_ms > p.max_time_ms) fail("min_time_ms exceeds max_time_ms, so the run could never converge");
}

} // namespace

stopping_rule::stopping_rule(stopping_params params)
    : m_params(params), m_last_rel_ci(std::numeric_limits<double>::infinity()) {
  validate(m_params);
  m_samples.reserve(std::min<std::size_t>(m_params.max_samples, 1 << 16));
}

void stopping_rule::add(double sample_ms) {
  if (done()) throw std::logic_error("stopping_rule::add: the rule is already done (" + m_reason + ")");
  if (!std::isfinite(sample_ms) || sample_ms < 0.0) {
    throw std::invalid_argument("stopping_rule::add: a sample must be finite and >= 0, got " +
                                std::to_string(sample_ms));
  }
  m_samples.push_back(sample_ms);
  m_total_ms += sample_ms;

  const bool time_cap = m_total_ms >= m_params.max_time_ms;
  const bool sample_cap = m_samples.size() >= m_params.max_samples;
  const bool scheduled = m_samples.size() >= m_next_check;
  if (may_converge() && (scheduled || time_cap || sample_cap) && check_converged()) {
    m_reason = "converged";
  } else if (time_cap) {
    m_reason = "time_cap";
  } else if (sample_cap) {
    m_reason = "sample_cap";
  }
}

bool stopping_rule::may_converge() const {
  return m_samples.size() >= m_params.min_samples && m_total_ms >= m_params.min_time_ms;
}

bool stopping_rule::check_converged() {
  // Merge only the samples added since the last check: O(n) instead of a full sort.
  const auto old_size = static_cast<std::ptrdiff_t>(m_sorted.size());
  m_sorted.insert(m_sorted.end(), m_samples.begin() + old_size, m_samples.end());
  std::sort(m_sorted.begin() + old_size, m_sorted.end());
  std::inplace_merge(m_sorted.begin(), m_sorted.begin() + old_size, m_sorted.end());

  const std::size_t n = m_sorted.size();
  m_next_check = n + std::max<std::size_t>(1, n / k_check_divisor);
  m_last_rel_ci = median_ci_rel_halfwidth(m_sorted, m_params.confidence);
  return m_last_rel_ci <= m_params.target_rel_ci;
}

} // namespace kj::timing
