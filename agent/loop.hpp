// One trajectory of the built-in agent: the ReAct loop (ask the model, run the tools it calls, send the
// results back) under budgets and context management, every turn recorded; then selection and the
// re-measurement.
#pragma once

#include "adapters/llm/client.hpp"
#include "agent/agent_judge.hpp"
#include "agent/context.hpp"
#include "agent/prompt.hpp"
#include "agent/recorder.hpp"
#include "agent/selection.hpp"
#include "agent/tools.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>

namespace kj::agent {

struct budgets {
  int max_turns = 200;                    // calls to the model
  std::optional<std::int64_t> max_tokens; // all four buckets summed over the trajectory's calls
  std::optional<double> max_seconds;      // [s] the trajectory's wall time
  std::optional<double> max_usd;          // the trajectory's cost
  std::optional<double> run_usd;          // the whole run's cost (--budget-usd)
  int max_idle_replies = 3;               // replies in a row without a tool call before it stops
  std::string describe() const;           // for the task message
};

// How a trajectory reaches its model: a client per trajectory (its exchange log names the trajectory).
struct model_settings {
  std::string adapter; // anthropic, gemini, openai
  std::string model;
  std::string base_url;
  std::string api_key;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<int> thinking_budget;
  std::optional<std::string> effort;
  llm::client_options client;
  const llm::price_table* prices = nullptr;
  std::string api; // OpenAI: "responses", "chat", or "" (by the model table)
};

struct trajectory_spec {
  const kb::problem* problem = nullptr;
  std::int64_t problem_id = 0;
  int attempt = 0;
  std::string producer;            // agent/<adapter>/<model>
  std::filesystem::path workspace; // created by the loop; must not exist
  agent_prompt prompt;
  std::string settings_json;
  profile_context profiling;
  speedup_basis basis;
};

// Runs one trajectory to its end and returns its record as stored. Failures of the model's provider or of the
// engine end the trajectory (status llm_error / error, with the reason), not the run; an llm_error that no
// later call can recover from (a bad key, a spend limit) is rethrown after the trajectory is stored.
db::trajectory_record run_trajectory(const trajectory_spec& spec, const model_settings& model,
                                     const budgets& limits, const context_settings& context, judge& engine,
                                     recorder& rec, const std::function<bool()>& cancelled);

} // namespace kj::agent
