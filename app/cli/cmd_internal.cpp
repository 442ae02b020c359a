// `kj runner` and `kj worker`: kj's own processes (hidden from --help), started by a judge and by the
// orchestrator.
#include "app/cli/commands.hpp"
#include "core/device_kind.hpp"
#include "engine/worker/runner.hpp"
#include "engine/worker/worker.hpp"

#include <map>
#include <memory>
#include <string>

namespace kj::cli {

action add_runner_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("runner", ""); // internal: the candidate's process, started by a judge worker
  cmd->group("");
  auto options = std::make_shared<worker::runner_options>();
  cmd->add_option("--socket", options->socket_fd, "descriptor of the judge's socket");
  cmd->add_option("--device", options->device, "cpu or cuda")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, device_kind>{{"cpu", device_kind::cpu}, {"cuda", device_kind::cuda}}));
  return [options] { return worker::run_runner(*options); };
}

action add_worker_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("worker", ""); // internal: started by the orchestrator, one per job
  cmd->group("");
  auto options = std::make_shared<worker::worker_options>();
  auto* job = cmd->add_option("--job", options->job_file, "job file");
  // a judge that serves evaluations one after another: job files' paths, a line each, on this descriptor
  cmd->add_option("--jobs-fd", options->jobs_fd, "descriptor the paths of job files arrive on")
      ->excludes(job);
  cmd->add_option("--result-fd", options->result_fd, "descriptor of the report pipe");
  return [options] {
    if (options->job_file.empty() && options->jobs_fd < 0) throw CLI::RequiredError("--job or --jobs-fd");
    return options->jobs_fd >= 0 ? worker::serve_evaluations(*options) : worker::run_worker(*options);
  };
}

} // namespace kj::cli
