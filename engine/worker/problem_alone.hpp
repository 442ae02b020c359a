// The problem alone: when the candidate's process says the problem failed (its get_inputs() or
// get_init_inputs()) and kj's judge, which runs the problem outside the sandbox, sees it work, a control is
// asked: a fresh runner with the problem's own Model as its candidate, kj's sandbox and limits, a scratch
// folder of its own. The problem is blamed only when it fails there too, in a process no candidate ran in
// (a problem that needs the network or files in $HOME); otherwise the candidate broke its own process.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "engine/worker/runner_link.hpp"

#include <functional>
#include <nlohmann/json.hpp>

namespace kj::worker {

// The control's reply: its load's when that failed, else its answer to `request` (null: the load alone). Its
// time is kj's own (a clock of its own, charged to nobody); `spec_of` makes the runner spec of a job.
nlohmann::json problem_alone(const exec::evaluate_job& job, const nlohmann::json& request,
                             const cuda::plugin* plugin,
                             const std::function<runner_spec(const exec::evaluate_job&)>& spec_of);

// The candidate source a control loads: the problem's own Model as ModelNew.
exec::source_file control_candidate(const exec::source_file& problem);

} // namespace kj::worker
