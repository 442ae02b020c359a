// The cold measurement loop (warmup, then flushed samples until the stopping rule is done) and its subjects.
#pragma once

#include "timing/cache_flush.hpp"
#include "timing/host_clock.hpp"
#include "timing/statistics.hpp"
#include "timing/stopping_rule.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace kj::timing {

// What the loop times. Per sample, in this order: prepare() and flush() (both outside the timed window),
// start(), call(), stop_ms(), which returns the sample [ms]. prepare() is where fresh inputs are drawn, so
// that no two calls see the same contents (a result cache keyed on a tensor's identity or contents never
// hits). The host subject below uses the steady clock; a CUDA subject records events around the call and
// memsets L2 in flush().
struct timed_subject {
  virtual ~timed_subject() = default;
  virtual void prepare() {}
  virtual void flush() = 0;
  virtual void start() = 0;
  virtual void call() = 0;
  virtual double stop_ms() = 0;
};

struct measure_params {
  // Warmup runs whole samples (flush included) and discards them; it ends once both minima are met,
  // or at warmup_max_calls.
  std::size_t warmup_min_calls = 3;
  double warmup_min_ms = 25; // [ms] of sample time as the subject reports it, or of wall clock (flushes too)
  std::size_t warmup_max_calls = 10000;
  // [ms] wall clock over the trials: flushes and synchronisation are not in the samples, so the stopping
  // rule's time cap alone does not bound how long a run of tiny samples takes (nvbench: 15 s "timeout").
  double max_wall_ms = 15000;
  stopping_params stopping{};
};

struct measurement {
  std::vector<double> samples_ms; // [ms] in the order taken, warmup excluded
  summary stats;                  // of samples_ms
  std::string stop_reason;        // the stopping rule's reason, or "wall_timeout"
  std::size_t warmup_calls = 0;
  double warmup_ms = 0; // [ms] sum of the warmup samples
  stopping_params params;
};

// Runs warmup and trials on the subject and summarizes them; see measure_cold. One run per object.
class cold_measurement {
public:
  // Throws std::invalid_argument for inconsistent parameters (see stopping_rule for its own).
  cold_measurement(timed_subject& subject, const measure_params& params);
  // Throws std::logic_error on a second call.
  measurement run();

private:
  double take_sample();
  void run_warmup();
  void run_trials();
  void generate_summary();

  timed_subject& m_subject;
  measure_params m_params;
  stopping_rule m_rule;
  measurement m_result;
  bool m_ran = false;
};

// One cold measurement with the default steps. Exceptions from the subject propagate.
measurement measure_cold(timed_subject& subject, const measure_params& params = {});

// Times a host function with the steady clock; flush() evicts the last-level cache.
class host_subject final : public timed_subject {
public:
  // flush_bytes: see host_cache_flusher (0 = automatic size).
  // prepare: called before each sample's flush (fresh inputs); may be empty.
  explicit host_subject(std::function<void()> function, std::size_t flush_bytes = 0,
                        std::function<void()> prepare = {});

  void prepare() override {
    if (m_prepare) m_prepare();
  }
  void flush() override { m_flusher.flush(); }
  void start() override { m_start = host_clock::now(); }
  void call() override { m_function(); }
  double stop_ms() override { return elapsed_ms(m_start, host_clock::now()); }

private:
  std::function<void()> m_function;
  std::function<void()> m_prepare;
  host_cache_flusher m_flusher;
  host_clock::time_point m_start;
};

} // namespace kj::timing
