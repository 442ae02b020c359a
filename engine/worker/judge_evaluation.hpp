// One evaluation inside the worker: load, build, correctness trials, timing; every step reported as an event.
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/worker/channel.hpp"
#include "engine/worker/runner_link.hpp"
#include "engine/worker/runner_pool.hpp"

#include <memory>
#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <string>

namespace kj::worker {

// Imports problem and candidate only, so that the candidate's extensions are compiled into the build cache.
void build(const exec::build_job& job, pybind11::module_& runtime, result_channel& channel);

// The evaluation's clock (judge_clock.hpp), reporting on `channel` from now on: the candidate may use the
// job's --timeout; kj's own time is not counted.
std::shared_ptr<judge_clock> start_clock(const exec::evaluate_job& job, result_channel& channel);

// The runner of an evaluation, started before the judge imports torch (python_sandbox_paths()): the two
// processes' start-ups overlap. evaluate() connects to it and loads problem and candidate.
std::unique_ptr<runner_link> launch_runner(const exec::evaluate_job& job, std::shared_ptr<judge_clock> clock);

// Starts the pool's spare runner as `job`'s would be started (a serving judge, before it imports torch).
void start_runner_ahead(runner_pool& pool, const exec::evaluate_job& job);

// `runner`: the one launch_runner started, or null; with a pool (a judge serving one job after another), the
// runner comes from the pool and the next job's is started once this one's candidate is loaded.
void evaluate(const exec::evaluate_job& job, std::unique_ptr<runner_link> runner,
              const std::shared_ptr<judge_clock>& clock, pybind11::module_& runtime, result_channel& channel,
              runner_pool* pool = nullptr);

} // namespace kj::worker
