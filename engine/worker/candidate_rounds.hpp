// The candidate's timing rounds as the judge runs them: robust rounds it drives call by call
// (driven_timing.hpp), rounds the runner times itself for the methods that reproduce other harnesses' loops,
// and the timed outputs each round snapshotted, checked while the runner is stopped.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "engine/worker/channel.hpp"
#include "engine/worker/runner_link.hpp"
#include "engine/worker/support.hpp"
#include "engine/worker/timing_bridge.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>
#include <vector>

namespace kj::worker {

// A seed the candidate cannot know in advance (the OS's randomness).
std::uint64_t secret_seed();

struct candidate_timing {
  timing_result timed;
  double draw_ms =
      0; // [ms] kj's fastest input draw of the round in the runner (bounded by the judge's clock)
};

struct reference_timing {
  timing_result timed;
  double draw_ms = 0;           // [ms] the fastest of the same draws in the judge
  std::vector<double> draws_ms; // [ms] all of them: their spread is the machine's noise
};

// A candidate round the judge drives call by call, for every method (robust: a seed per call and three
// snapshot slots; kernelbench and cuda-agent: one fixed input set, the last call checked): NVML around it
// from the judge (the runner's processes not counted as others), its snapshots checked ("case" events).
candidate_timing driven_candidate_round(const exec::evaluate_job& job, const exec::timing_spec& spec,
                                        pybind11::object& session, runner_link& runner,
                                        result_channel& channel, phase_clock& phase,
                                        const cuda::plugin* plugin, int cpu = -1);

// Another subject of the runner's, driven the same way on one fixed input set: "empty" (the timer's floor, an
// empty forward) or "graph" (replays of the candidate's forward captured as a CUDA graph).
timing_result drive_subject(runner_link& runner, const exec::timing_spec& spec, const std::string& subject,
                            device_kind device);

} // namespace kj::worker
