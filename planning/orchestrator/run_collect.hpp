// `kj run --collect-only`: the plan of a run without running it.
#pragma once

#include "core/device_kind.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/run.hpp"

#include <vector>

namespace kj::orchestrator {

// Prints one line per candidate (problem, producer, whether it is compiled, its file) and the problems left
// without one; returns the exit code (0). Throws kb::source_error as a run would (no candidate, a bad
// folder).
int collect_only(const run_options& options, const std::vector<kb::problem>& problems, device_kind device);

} // namespace kj::orchestrator
