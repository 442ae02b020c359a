// The worker's baseline modes (exec::baseline_job, timed or compile only).
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/worker/channel.hpp"

#include <pybind11/embed.h>

namespace kj::worker {

// "baseline": loads the problem, draws the timing inputs as for a candidate, then for each of
// its modes builds its Model (compiling after torch._dynamo.reset()), checks the compiled output
// against eager, times it with job.timing and reports a "timing" event whose subject is the mode, and a
// "baseline" event with the mode's status (ok, compile_error, runtime_error, oom) and compile_s.
// "baseline_compile": the same without the check and the timing. The job ends with verdict "ok", or with
// the failure that stopped every mode (problem_error, needs_weights, oom while drawing the inputs).
void run_baseline(const exec::baseline_job& job, pybind11::module_& runtime, result_channel& channel);

} // namespace kj::worker
