// The adaptive stopping rule: take samples until the median is known precisely enough or a budget runs out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kj::timing {

// When to stop sampling. Times are sums of the samples themselves (e.g. GPU time), not wall time.
struct stopping_params {
  std::size_t min_samples = 10;
  double min_time_ms = 100;        // [ms] accumulated sample time before convergence may stop the run
  double target_rel_ci = 0.005;    // relative half-width of the median's confidence interval (0.5%)
  double max_time_ms = 5000;       // [ms] accumulated sample time: hard cap
  std::size_t max_samples = 10000; // hard cap
  double confidence = 0.95;        // of the median's confidence interval
};

// Feeds on one sample at a time. Done when
//   (n >= min_samples AND sample time >= min_time_ms AND relative CI half-width of the median <= target)
//   OR sample time >= max_time_ms OR n >= max_samples.
// The caps are hard: they stop the run even before min_samples. Convergence is tested every sample while
// n < 16 and then after every n/16 new samples (a geometric schedule, about 6% apart), so a check costs
// O(n) (merging the new samples into a sorted copy) and a sample O(1) amortized; the run may therefore go
// on up to ~6% past the first sample count at which it had converged. A cap forces a last check, so a run
// that converged on its final sample reports "converged".
class stopping_rule {
public:
  // Throws std::invalid_argument for parameters that can never stop sensibly.
  explicit stopping_rule(stopping_params params = {});

  // Records one sample [ms]. Throws std::invalid_argument for a negative or non-finite sample and
  // std::logic_error when the rule is already done.
  void add(double sample_ms);

  bool done() const { return !m_reason.empty(); }
  // "converged", "time_cap", "sample_cap", or "" while running.
  std::string reason() const { return m_reason; }

  const std::vector<double>& samples() const { return m_samples; }
  const stopping_params& params() const { return m_params; }
  double total_ms() const { return m_total_ms; }
  // The relative CI half-width at the latest convergence check; +infinity before the first one.
  double last_rel_ci() const { return m_last_rel_ci; }

private:
  bool may_converge() const;
  bool check_converged();

  stopping_params m_params;
  std::vector<double> m_samples;
  std::vector<double> m_sorted; // a sorted copy of the samples as of the latest check
  double m_total_ms = 0;
  double m_last_rel_ci;
  std::size_t m_next_check = 0;
  std::string m_reason;
};

} // namespace kj::timing
