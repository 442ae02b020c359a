// The table of kj's subcommands: main.cpp registers and dispatches from it, so a subcommand is listed once.
#include "app/cli/commands.hpp"

namespace kj::cli {

const std::vector<command>& commands() {
  // Most subcommands need only the app; run, generate and agent also read the raw command line.
  static const std::vector<command> table{
      {"run", add_run_command},
      {"baselines", [](CLI::App& app, int, char**) { return add_baselines_command(app); }},
      {"problems", [](CLI::App& app, int, char**) { return add_problems_command(app); }},
      {"results", [](CLI::App& app, int, char**) { return add_results_command(app); }},
      {"report", [](CLI::App& app, int, char**) { return add_report_command(app); }},
      {"compare", [](CLI::App& app, int, char**) { return add_compare_command(app); }},
      {"history", [](CLI::App& app, int, char**) { return add_history_command(app); }},
      {"db", [](CLI::App& app, int, char**) { return add_db_command(app); }},
      {"worker", [](CLI::App& app, int, char**) { return add_worker_command(app); }},
      {"runner", [](CLI::App& app, int, char**) { return add_runner_command(app); }},
      {"generate", add_generate_command},
      {"costs", [](CLI::App& app, int, char**) { return add_costs_command(app); }},
      {"merge", [](CLI::App& app, int, char**) { return add_merge_command(app); }},
      {"agent", add_agent_command},
      {"show", [](CLI::App& app, int, char**) { return add_show_command(app); }},
      {"runs", [](CLI::App& app, int, char**) { return add_runs_command(app); }},
      {"export", [](CLI::App& app, int, char**) { return add_export_command(app); }},
      {"audit", [](CLI::App& app, int, char**) { return add_audit_command(app); }},
      {"verified", [](CLI::App& app, int, char**) { return add_verified_command(app); }},
      {"import", [](CLI::App& app, int, char**) { return add_import_command(app); }},
      {"claims", [](CLI::App& app, int, char**) { return add_claims_command(app); }},
      {"doctor", [](CLI::App& app, int, char**) { return add_doctor_command(app); }},
      {"completion", [](CLI::App& app, int, char**) { return add_completion_command(app); }},
  };
  return table;
}

} // namespace kj::cli
