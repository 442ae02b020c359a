// Records of the built-in agent's tables (schema v7): trajectories, their turns and tool calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kj::db {

// One independent attempt of the agent at one problem: its settings, prompts, budget use, how it ended, the
// candidates it selected and finished with, and the fresh re-measurement that is its reported result.
struct trajectory_record {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::int64_t problem_id = 0;
  int attempt = 0;      // 0 .. K-1 (--attempts K); the candidates' sample number
  std::string producer; // "agent/<adapter>/<model>": the producer of its candidates
  std::string adapter;  // anthropic, gemini, openai
  std::string model;
  std::string prompt_hash;   // sha256 of system prompt and task message
  std::string system_prompt; // the skill document and the tools' contract
  std::string task_prompt;   // the first user message
  std::string settings_json; // budgets, context window, device, timing
  std::string workspace;     // the folder the tools acted on
  // running, submitted, turn_limit, token_limit, time_limit, usd_limit, run_usd_limit, no_tool_calls,
  // context_exceeded, refused, llm_error, error, interrupted
  std::string status = "running";
  std::string stop_detail;
  int turns = 0;
  std::int64_t input_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, output_tokens = 0;
  std::int64_t reasoning_tokens = 0; // of output_tokens, where the provider counts them
  std::optional<double> cost_usd;    // none while no call had a price
  double wall_s = 0;                 // [s]
  // The best candidate of the trajectory (strict pass, fastest against `speedup_baseline`) and the in-loop
  // evaluation that made it best; the final candidate (the workspace when it ended) and its last in-loop
  // evaluation; the fresh evaluation (new worker, new inputs) of the selected candidate, else of the final
  // one: the trajectory's reported result. 0: none.
  std::int64_t selected_candidate_id = 0, selected_evaluation_id = 0;
  std::int64_t final_candidate_id = 0, final_evaluation_id = 0;
  std::int64_t result_evaluation_id = 0;
  std::string speedup_baseline;             // the mode speedups are against: compile-default, ..., or eager
  std::optional<double> inloop_speedup;     // the selected candidate's, as measured in the loop
  std::optional<double> remeasured_speedup; // the same, in the fresh evaluation
  std::string started_at, finished_at;

  // in-loop / re-measured: how much picking the best of the trajectory inflated its speedup (1 = not at all).
  std::optional<double> inflation() const;
};

// One call to the model: what kj added before it, what the model answered, what it cost.
struct turn_record {
  std::int64_t id = 0;
  std::int64_t trajectory_id = 0;
  int turn = 0;                 // 1-based
  std::int64_t exchange_id = 0; // llm_exchanges row of the call; 0 when not recorded
  std::string user_note;        // text kj sent in the user turn before this call ("" none): nudges, warnings
  std::string context_note;     // what context management did before this call ("" nothing)
  std::int64_t context_tokens = 0; // the prompt's size estimate before the call
  std::string text;                // the assistant's text
  std::string thinking;            // its readable thinking ("" none; redacted blocks are counted, not shown)
  std::string stop_reason;
  std::int64_t input_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, output_tokens = 0;
  std::int64_t reasoning_tokens = 0; // of output_tokens, where the provider counts them
  std::optional<double> cost_usd;
  double latency_ms = 0; // [ms] all attempts of the call
  std::string started_at, finished_at;
};

// One tool call of a turn and what it returned to the model.
struct tool_call_record {
  std::int64_t id = 0;
  std::int64_t turn_id = 0;
  int seq = 0;         // order within the turn
  std::string call_id; // the provider's id ("" when it gave none)
  std::string tool;
  std::string arguments_json;
  std::string result;  // the text sent back, whole
  std::string summary; // one line: what an elided result is replaced with
  bool is_error = false;
  std::int64_t candidate_id = 0;  // compile/verify/profile/submit: the candidate it acted on
  std::int64_t evaluation_id = 0; // verify/profile: the in-loop evaluation
  double seconds = 0;             // [s]
};

// A trajectory with its turns and their tool calls, for `kj show` and reports.
struct trajectory_transcript {
  trajectory_record trajectory;
  std::vector<turn_record> turns;
  std::vector<std::vector<tool_call_record>> calls; // per turn, in seq order
};

} // namespace kj::db
