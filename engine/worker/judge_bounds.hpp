// What the judge's clock and the GPU's physics say of the candidate's timing: the handshake's per-call
// charges pooled over the rounds (a refused round, or numerics flags the candidate changed, leave it
// uncredited), the draw check, and the physical floor.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/worker/candidate_rounds.hpp"
#include "engine/worker/timing_bridge.hpp"

#include <nlohmann/json.hpp>
#include <pybind11/embed.h>
#include <string>
#include <vector>

namespace kj::worker {

// The backend flags among `changed` that lower the precision a forward computes at, named ("" when none).
std::string lower_numerics(const nlohmann::json& changed);

// Over all robust rounds: see judge_bounds.cpp.
void bound_by_clock(timing_result& merged, const std::vector<candidate_timing>& candidate,
                    const std::vector<reference_timing>& reference, bool cuda);

// Methods with one round (kernelbench, cuda-agent): a round whose calls the judge's clock charged
// systematically marks the timing doubtful (`clock_doubt`), credited at its charged samples.
void mark_systematic_charges(timing_result& merged, const std::vector<candidate_timing>& candidate);

// The physical floor of the candidate's calls on this GPU, recorded; a median below it is not credited.
void bound_by_physics(timing_result& candidate, pybind11::object& session, const cuda::plugin& plugin);

} // namespace kj::worker
