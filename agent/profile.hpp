// What the profile tool tells the model: times against eager and the compiled baselines, the kernel trace
// table and library share (GPU), the fraction of the hardware's speed of light, Nsight Compute's per-kernel
// metrics.
#pragma once

#include "agent/agent_judge.hpp"
#include "agent/hardware.hpp"
#include "agent/ncu.hpp"
#include "db/store.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kj::agent {

struct baseline_time {
  std::string mode; // compile-default, max-autotune, ...
  double ms = 0;    // [ms] its headline
};

// The lower bounds a forward cannot beat: moving its bytes at the peak bandwidth, doing its counted FLOPs at
// the peak rate. Each is none when its numerator or denominator is unknown.
struct speed_of_light {
  std::optional<double> memory_ms;  // [ms] bytes / bandwidth
  std::optional<double> compute_ms; // [ms] FLOPs / peak
  std::optional<double> bound_ms() const;
};
speed_of_light estimate_speed_of_light(const problem_cost& cost, const peaks& hardware);

struct profile_facts {
  const db::evaluation_record* record = nullptr; // the profile's evaluation
  std::string hash; // the candidate's short hash; "" when the reference was profiled alone
  std::string device;
  std::vector<baseline_time> baselines;   // cached compiled baselines of the problem
  std::vector<std::string> missing_modes; // compiled modes kj has no baseline for
  problem_cost cost;
  peaks hardware;
  std::optional<ncu_report> ncu;
};

// The profile tool's text; its first line is the summary (speedups, candidate time, verdicts).
std::string profile_text(const profile_facts& facts);

// Human units: "4.19 MB", "1.2 GFLOP".
std::string human_bytes(double bytes);
std::string human_flops(double flops);

} // namespace kj::agent
