// What `kj agent` acts on, resolved once from its options at its front door (execute_agent): the checked
// model, the skill document's text, the run's config and the trajectories' shared settings, the cache and
// workspace folders. The steps after the front door take these, never the options.
#pragma once

#include "adapters/llm/prices.hpp"
#include "agent/planner.hpp"
#include "planning/orchestrator/run_session.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::agent {

struct agent_inputs {
  orchestrator::session_request session; // device, GPUs, judging, the checked cache folder, the run id
  std::filesystem::path db_path;
  kb::source_options sources;
  model_settings model;  // checked: a known adapter, a model, its key, a price where a dollar budget needs it
  std::string skill;     // the skill document's text ("" the built-in one)
  nlohmann::json config; // the run's config, without the device (added once the session knows it)
  nlohmann::json settings; // every trajectory's settings, without the device and ncu (the session's)
  std::string baselines;   // "cached", "none" or modes to measure first
  std::string ncu;
  peak_settings peaks;
  budgets limits;
  context_settings context;
  std::filesystem::path workspaces; // resolved: <cache dir>/agent unless given
  int attempts = 1;
  int parallel = 1;
  std::string command_line;
  std::string producer; // agent/<adapter>/<model>: the run's and its trajectories' label
};

// The price table --prices names (the built-in one when none); kb::source_error when it cannot be read.
llm::price_table load_prices(const agent_options& o);

// The model the agent talks to, checked before anything runs (kb::source_error): a known adapter, a model
// name, its API key, a price when a dollar budget needs one, and a request the provider can take. `prices`
// must outlive the result.
model_settings checked_model(const agent_options& o, const llm::price_table& prices);

// The file's whole text; kb::source_error naming `what` and the file when it cannot be read.
std::string read_text(const std::filesystem::path& file, const char* what);

// The run's config as `kj agent` records it, without the device.
nlohmann::json agent_run_config(const agent_options& o);

// The settings every trajectory of the run shares, without the device and ncu.
nlohmann::json trajectory_settings(const agent_options& o);

} // namespace kj::agent
