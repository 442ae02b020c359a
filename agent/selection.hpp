// Selection without inflation: the best version of a trajectory (strictly correct, fastest against the
// baseline the run compares with), its in-loop speedup, and the speedup of a fresh measurement to set beside
// it.
#pragma once

#include "agent/tools.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kj::agent {

// What speedups are measured against: a cached compiled baseline's time (constant for the problem), or the
// evaluation's own paired eager time when there is none.
struct speedup_basis {
  std::string mode = "eager"; // compile-default, max-autotune, ..., or eager
  std::optional<double> ms;   // [ms] the compiled baseline's headline; none for eager
};

// The baseline's time over the candidate's in this evaluation; none when either is missing.
std::optional<double> speedup(const db::evaluation_record& record, const speedup_basis& basis);

struct selection {
  const judged* best = nullptr;         // none: no version passed both verdicts
  std::optional<double> inloop_speedup; // none when the best was only verified, not profiled
};

// The fastest profiled version that passed both verdicts; when none was profiled, the latest verified one
// that passed both (its speed unknown).
selection select_best(const std::vector<judged>& history, const speedup_basis& basis);

} // namespace kj::agent
