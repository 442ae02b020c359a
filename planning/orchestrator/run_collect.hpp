// `kj run --collect-only`: the plan of a run without running it.
#pragma once

#include "core/device_kind.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/run_setup.hpp"

#include <vector>

namespace kj::orchestrator {

// Prints one line per candidate of the run's shard (problem, producer, whether it is compiled, its file) and
// the problems left without one; returns the exit code (0). `candidates`: imported and filtered as the run
// would judge them (none for an LLM adapter's run, which says what it would ask instead).
int collect_only(const run_inputs& inputs, const std::vector<kb::problem>& problems,
                 std::vector<adapters::candidate> candidates, device_kind device);

} // namespace kj::orchestrator
