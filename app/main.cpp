// Entry point of `kj`: parse the command line, run the chosen subcommand, map errors to exit codes.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/project_config.hpp"
#include "app/cli/run_summary.hpp"
#include "app/cli/suggest.hpp"
#include "core/version.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <fmt/core.h>
#include <string_view>
#include <sys/prctl.h>
#include <vector>

int main(int argc, char** argv) {
  // kj and its judge workers hold what candidates must not read (API keys in the environment, the DB open):
  // not dumpable, so that processes of the same user without CAP_SYS_PTRACE cannot read /proc/<pid>/environ,
  // mem or fd. The runner (the candidate's own process) is exempt: it holds nothing.
  if (argc < 2 || std::string_view(argv[1]) != "runner") ::prctl(PR_SET_DUMPABLE, 0);
  // `kj run --config x.toml` reads as `kj --config x.toml run` (--config is kj's own option).
  std::vector<std::string> args = kj::cli::hoist_config_option({argv, argv + argc});
  std::vector<char*> hoisted;
  for (auto& arg : args)
    hoisted.push_back(arg.data());
  hoisted.push_back(nullptr);
  argv = hoisted.data();
  CLI::App app{"kerneljudge: verify and time GPU kernels against KernelBench references", "kj"};
  app.set_version_flag("--version", "kj " + kj::version_string());
  app.require_subcommand(1);
  // Project defaults from ./kj.toml; never for kj's own processes (a runner's folder is the candidate's).
  const bool internal =
      argc >= 2 && (std::string_view(argv[1]) == "runner" || std::string_view(argv[1]) == "worker");
  if (!internal) kj::cli::use_project_config(app);
  auto run = kj::cli::add_run_command(app, argc, argv);
  auto baselines = kj::cli::add_baselines_command(app);
  auto problems = kj::cli::add_problems_command(app);
  auto results = kj::cli::add_results_command(app);
  auto report = kj::cli::add_report_command(app);
  auto compare = kj::cli::add_compare_command(app);
  auto history = kj::cli::add_history_command(app);
  auto db = kj::cli::add_db_command(app);
  auto worker = kj::cli::add_worker_command(app);
  auto runner = kj::cli::add_runner_command(app);
  auto generate = kj::cli::add_generate_command(app, argc, argv);
  auto costs = kj::cli::add_costs_command(app);
  auto merge = kj::cli::add_merge_command(app);
  auto agent = kj::cli::add_agent_command(app, argc, argv);
  auto show = kj::cli::add_show_command(app);
  auto runs = kj::cli::add_runs_command(app);
  auto export_ = kj::cli::add_export_command(app);
  auto audit = kj::cli::add_audit_command(app);
  auto verified = kj::cli::add_verified_command(app);
  auto doctor = kj::cli::add_doctor_command(app);
  auto completion = kj::cli::add_completion_command(app);
  if (const auto unknown = kj::cli::unknown_command(app, argc, argv)) {
    fmt::print(stderr, "kj: {}\n", *unknown);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string message = kj::cli::explain_parse_error(app, e, args);
    fmt::print(stderr, "kj: {}\nRun with --help for more information.\n", message);
    kj::cli::write_refused_summary(args, message); // --summary-json: written whatever stopped the run
    return 2;
  }
  try {
    if (app.got_subcommand("run")) return run();
    if (app.got_subcommand("baselines")) return baselines();
    if (app.got_subcommand("problems")) return problems();
    if (app.got_subcommand("results")) return results();
    if (app.got_subcommand("report")) return report();
    if (app.got_subcommand("compare")) return compare();
    if (app.got_subcommand("history")) return history();
    if (app.got_subcommand("db")) return db();
    if (app.got_subcommand("worker")) return worker();
    if (app.got_subcommand("runner")) return runner();
    if (app.got_subcommand("generate")) return generate();
    if (app.got_subcommand("costs")) return costs();
    if (app.got_subcommand("merge")) return merge();
    if (app.got_subcommand("agent")) return agent();
    if (app.got_subcommand("show")) return show();
    if (app.got_subcommand("runs")) return runs();
    if (app.got_subcommand("export")) return export_();
    if (app.got_subcommand("audit")) return audit();
    if (app.got_subcommand("verified")) return verified();
    if (app.got_subcommand("doctor")) return doctor();
    if (app.got_subcommand("completion")) return completion();
  } catch (const kj::cli::usage_error& e) {
    fmt::print(stderr, "kj: {}\n", kj::cli::attribute_to_config(app, e.what(), args));
    return 2;
  } catch (const kj::kb::source_error& e) {
    fmt::print(stderr, "kj: {}\n", e.what());
    return 2;
  } catch (const kj::db::db_error& e) {
    fmt::print(stderr, "kj: {}\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kj: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
