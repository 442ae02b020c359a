// One evaluation inside the worker: load, build, correctness trials, timing; every step reported as an event.
#pragma once

#include "harness/exec/messages.hpp"
#include "harness/worker/channel.hpp"

#include <pybind11/embed.h>
#include <pybind11/stl.h>
#include <string>

namespace kj::worker {

// Imports problem and candidate only, so that the candidate's extensions are compiled into the build cache.
void build(const exec::build_job& job, pybind11::module_& runtime, result_channel& channel);

void evaluate(const exec::evaluate_job& job, pybind11::module_& runtime, result_channel& channel);

} // namespace kj::worker
