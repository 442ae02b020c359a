// The worker's baseline modes (job.mode "baseline" and "baseline_compile").
#pragma once

#include "harness/job.hpp"
#include "harness/worker/channel.hpp"

#include <pybind11/embed.h>

namespace kj::worker {

// "baseline": loads the problem, draws the timing inputs as for a candidate, builds its Model under
// job.baseline_mode (compiling after torch._dynamo.reset()), checks the compiled output against eager, times
// it with job.timing and reports a "timing" event whose subject is the mode, then verdict "ok".
// "baseline_compile": the same up to the compile, then a "built" event with compile_s. Failures end with a
// verdict: problem_error, needs_weights, oom, compile_error, runtime_error.
void run_baseline(const job_spec& job, pybind11::module_& runtime, result_channel& channel);

} // namespace kj::worker
