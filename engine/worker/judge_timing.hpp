// Timing in the judge: the candidate's rounds run in the runner (asked for, never trusted for verdicts), the
// reference's in the judge, alternating; timed outputs checked on inputs the judge draws again; floor, trace.
#pragma once

#include "engine/exec/messages.hpp"
#include "engine/worker/channel.hpp"
#include "engine/worker/runner_link.hpp"
#include "engine/worker/support.hpp"

#include <pybind11/embed.h>

namespace kj::worker {

// Emits "timing" events (candidate, reference_eager, empty_forward, graphs), "case" events (timed_outputs)
// and the candidate's "trace". Throws std::runtime_error naming the runner's failure when it cannot be timed.
// Its time is split over the phases `timing` (both subjects' rounds), `timed_checks` (the snapshots checked),
// `floor` and `trace`, entered on `phase`. `numerics` (the candidate's, when narrower than the run's: bf16,
// fp16, tf32) goes into the candidate's timing.
void time_subjects(const exec::evaluate_job& job, pybind11::object& session, runner_link& runner,
                   result_channel& channel, phase_clock& phase, std::optional<precision> numerics);

} // namespace kj::worker
