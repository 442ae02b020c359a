// The judge's side of a round it drives call by call (driven_round.hpp), for every timing method and subject:
// the judge runs the loop itself, its subject the runner, one request per step. robust: the cold-measurement
// loop (warmup, the stopping rule), each call's inputs from a seed the judge draws for it alone and sends
// only when the call is prepared; kernelbench: KernelBench's fixed counts on one input set; cuda-agent:
// warmups, then calls each traced alone. Every call is bracketed by the judge's clock and (but for
// cuda-agent's kernel sums, which no clock can bound from below) its sample is credited no lower than the
// bracket less the handshake's own cost, measured before the candidate was loaded (timing/clock_bound.hpp).
// The runner reports one sample a call, which is all it says about time.
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/worker/runner_link.hpp"
#include "engine/worker/timing_bridge.hpp"
#include "timing/clock_bound.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::worker {

struct driven_result {
  timing_result timed;                 // credited samples; params.handshake says what was charged
  std::map<long, std::uint64_t> seeds; // candidate call -> the seed its inputs were drawn from (robust)
  long calls = 0;                      // calls the judge made (warmup included)
  double draw_ms = 0;                  // [ms] the fastest draw of the round (on CUDA bounded by the bracket)
  nlohmann::json flags;                // backend flags the candidate's process reports changed
};

struct driven_options {
  exec::timing_spec spec;            // its method picks the loop
  std::string subject = "candidate"; // or empty (the timer's floor), graph (replays of a captured forward)
  nlohmann::json fixed;              // {"seed", "rng"}: one input set for every call (null: a seed per call)
  long slots = 0;                    // snapshot slots in the arena (0: outputs not checked)
  std::uint64_t slot_bytes = 0;
  bool cuda = false;
  int cpu = -1;                        // the CPU the runner times on (timing_cpus.hpp); -1: its own choice
  timing::handshake_bound go, prepare; // from the runner's calibration
  std::vector<double> calibration;     // [ms] its go overheads, recorded with the timing
  // Called with each snapshot the runner reports, at once (the judge copies its slot into its vault).
  std::function<void(const nlohmann::json& snapshot)> take;
};

// One round. Throws runner_failure for the runner's failures (its verdict).
driven_result drive_round(runner_link& runner, const driven_options& options);

// The handshake bounds of a runner's calibration (an uncalibrated one gets timing/clock_bound's fallback).
std::pair<timing::handshake_bound, timing::handshake_bound> handshake_bounds(const runner_link& runner);

} // namespace kj::worker
