// A control runner: the problem alone, in kj's sandbox (problem_alone.hpp).
#include "engine/worker/problem_alone.hpp"

#include "engine/worker/judge_clock.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/core.h>
#include <random>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::worker {

exec::source_file control_candidate(const exec::source_file& problem) {
  return {problem.path + " (kj's control: the problem's own Model)",
          problem.source +
              "\n\n# kerneljudge control: the problem's own Model, in a process no candidate ran in\n"
              "ModelNew = Model\n"};
}

runner_failure blame_at_load(const std::string& error, const json& alone) {
  if (alone.value("kind", "") == "problem_error")
    return runner_failure("problem_error", alone.value("error", ""));
  return runner_failure(
      "runtime_error", "the candidate's process said the problem failed, but kj's judge builds the problem's "
                       "Model itself, and so does a process of kj's sandbox with no candidate in it: the "
                       "candidate's failure.\n" +
                           error);
}

namespace {

// A folder no earlier process could have prepared: a name drawn from the OS, made here (never one that
// exists), beside the candidate's.
fs::path fresh_scratch(const fs::path& beside) {
  std::random_device os;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const fs::path dir = beside.parent_path() / fmt::format("control-{:08x}{:08x}", os(), os());
    std::error_code ec;
    if (fs::create_directories(dir.parent_path(), ec), fs::create_directory(dir, ec)) return dir;
  }
  throw std::runtime_error("kj could not make a scratch folder for its control runner beside " +
                           beside.string());
}

} // namespace

json problem_alone(const exec::evaluate_job& job, const json& request, const cuda::plugin* plugin,
                   const std::function<runner_spec(const exec::evaluate_job&)>& spec_of) {
  exec::evaluate_job alone = job;
  alone.candidate = control_candidate(job.problem);
  alone.import_on_device = false;
  alone.extensions_dir.clear();
  runner_spec spec = spec_of(alone);
  spec.scratch = fresh_scratch(spec.scratch);
  // its own clock, reporting to nobody: the control's time is kj's, never the candidate's
  spec.clock = std::make_shared<judge_clock>(
      std::chrono::milliseconds(static_cast<long long>(std::max(60.0, job.timeout_s) * 1000)), nullptr);
  const fs::path scratch = spec.scratch;
  json reply;
  {
    runner_link control(std::move(spec), plugin);
    reply = control.load();
    if (reply.value("ok", false) && !request.is_null()) reply = control.request(request);
  }
  std::error_code ec;
  fs::remove_all(scratch, ec);
  if (reply.value("kind", "") == "problem_error") // the verdict's text, for the judge's C++ and Python alike
    reply["error"] =
        "the problem fails in kj's sandbox too, in a process no candidate ran in (the sandbox has no "
        "network, and HOME is a scratch folder):\n" +
        reply.value("error", std::string());
  return reply;
}

} // namespace kj::worker
