// `kj agent`: the built-in agent over a problem selection. It probes the stack, records the run, looks up (or
// measures) the compiled baselines, and runs K independent trajectories per problem, some at once.
#pragma once

#include "adapters/generate/generate.hpp"
#include "agent/context.hpp"
#include "agent/hardware.hpp"
#include "agent/loop.hpp"
#include "engine/exec/messages.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kj::agent {

struct agent_options {
  std::filesystem::path db_path = "kj.sqlite";
  std::string device = "auto";
  std::vector<int> gpus; // device slots (default: every visible GPU)
  kb::source_options sources;
  // protocol, precision, timing, trace policy, --set, the verify/profile job's timeout and the compile's
  orchestrator::judging_settings judging;
  // adapter, model, base URL, sampling, --budget-usd (the whole run), prices, timeouts, retries
  adapters::generation_options generation;
  int attempts = 1; // independent trajectories per problem
  int parallel = 1; // trajectories at once
  budgets limits;
  context_settings context;
  std::string run_uid; // resume this run when it exists
  std::filesystem::path cache_dir;
  std::filesystem::path workspaces; // default <cache dir>/agent
  // Compiled baselines: "cached" (those `kj baselines` measured), "none", or modes to measure first.
  std::string baselines = "cached";
  std::string ncu = "auto"; // auto (ncu on PATH, on a GPU), off, or a path
  peak_settings peaks;
  std::filesystem::path skill; // another skill document ("" the built-in one)
  std::string command_line;
};

// Returns the exit code: 0 when every trajectory ended (whatever the verdicts), 1 when the provider refused
// for good (a bad key, a spend limit), 2 on bad input, 130 on Ctrl-C.
int execute_agent(const agent_options& options);

} // namespace kj::agent
