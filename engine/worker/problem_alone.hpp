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

// The control's reply: its load's when that failed, else its answer to `request` (null: the load alone); a
// problem_error's text says the problem failed alone in kj's sandbox. Its
// time is kj's own (a clock of its own, charged to nobody); `spec_of` makes the runner spec of a job.
nlohmann::json problem_alone(const exec::evaluate_job& job, const nlohmann::json& request,
                             const cuda::plugin* plugin,
                             const std::function<runner_spec(const exec::evaluate_job&)>& spec_of);

// The verdict when the candidate's process said the problem failed at its load (`error`) and kj's judge built
// the problem itself: the problem's when the control's load (`alone`) failed as the problem's too, else the
// candidate's runtime_error.
runner_failure blame_at_load(const std::string& error, const nlohmann::json& alone);

// The candidate source a control loads: the problem's own Model as ModelNew.
exec::source_file control_candidate(const exec::source_file& problem);

} // namespace kj::worker
