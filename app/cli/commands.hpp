// The `kj` subcommands: each registers its options on the app and returns the action to run after parsing.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <vector>

namespace kj::cli {

using action = std::function<int()>;

// One row per subcommand: its name as typed and how it registers itself (its options on the app) and returns
// the action to run once the command line is parsed. commands() lists every subcommand once, in --help's
// order.
struct command {
  const char* name;
  action (*add)(CLI::App& app, int argc, char** argv);
};
const std::vector<command>& commands(); // commands.cpp

action add_run_command(CLI::App& app, int argc, char** argv);
action add_baselines_command(CLI::App& app);
action add_problems_command(CLI::App& app);
action add_results_command(CLI::App& app);
action add_report_command(CLI::App& app);
action add_compare_command(CLI::App& app);
action add_history_command(CLI::App& app);                         // cmd_history.cpp
action add_db_command(CLI::App& app);                              // cmd_db.cpp
action add_worker_command(CLI::App& app);                          // cmd_internal.cpp
action add_runner_command(CLI::App& app);                          // cmd_internal.cpp
action add_generate_command(CLI::App& app, int argc, char** argv); // cmd_generate.cpp
action add_costs_command(CLI::App& app);                           // cmd_costs.cpp
action add_merge_command(CLI::App& app);                           // cmd_merge.cpp
action add_agent_command(CLI::App& app, int argc, char** argv);    // cmd_agent.cpp (links kj_agent)
action add_show_command(CLI::App& app);                            // cmd_show.cpp (links kj_agent)
action add_runs_command(CLI::App& app);                            // cmd_runs.cpp
action add_export_command(CLI::App& app);                          // cmd_export.cpp
action add_audit_command(CLI::App& app);                           // cmd_audit.cpp
action add_verified_command(CLI::App& app);                        // cmd_verified.cpp
action add_doctor_command(CLI::App& app);                          // cmd_doctor.cpp
action add_completion_command(CLI::App& app);                      // cmd_completion.cpp
action add_import_command(CLI::App& app);                          // cmd_import.cpp
action add_claims_command(CLI::App& app);                          // cmd_claims.cpp

} // namespace kj::cli
