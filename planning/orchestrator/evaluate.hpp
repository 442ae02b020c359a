// evaluate(): judge one candidate against one problem through the same build cache, scheduler and worker as
// `kj run`, and return the record instead of writing it (the built-in agent's verify and profile tools).
#pragma once

#include "adapters/candidates.hpp"
#include "engine/exec/messages.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"
#include "planning/results/sinks.hpp"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::orchestrator {

struct evaluate_options {
  std::string device = "auto"; // auto, cpu or cuda
  judging_settings judging;
  std::filesystem::path cache_dir; // default: exec::default_cache_dir()
  nlohmann::json env;              // the probe's environment; probed when null (a worker start)
  int gpu = 0;                     // cuda: the GPU the job runs on (CUDA_VISIBLE_DEVICES)
  // Put before the worker's own command line (e.g. Nsight Compute: {"ncu", "--export", ...}); empty: none.
  std::vector<std::string> wrapper;
};

// The candidate's problem_index is ignored. The record carries no DB ids (nothing is written). Throws
// kb::source_error for a bad option (device, protocol, precision).
results::evaluation_result evaluate(const kb::problem& problem, const adapters::candidate& candidate,
                                    const evaluate_options& options);

// The build step of evaluate() alone: the candidate's content-addressed build (compiled now, or found in the
// cache), with the compiler's log. None when the candidate compiles nothing (no torch.utils.cpp_extension).
// Uses the options' device, env (probed when null), overrides, timeout and cache_dir.
std::optional<exec::build_record> build(const kb::problem& problem, const adapters::candidate& candidate,
                                        const evaluate_options& options);

} // namespace kj::orchestrator
