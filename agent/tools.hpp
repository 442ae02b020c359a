// The agent's tools: file tools on the workspace, and compile, verify, profile and submit through the judge.
// Every tool returns text for the model (its first line a summary) and what it did, for the transcript.
#pragma once

#include "adapters/llm/conversation.hpp"
#include "agent/agent_judge.hpp"
#include "agent/hardware.hpp"
#include "agent/profile.hpp"
#include "agent/workspace.hpp"
#include "kernelbench/problems.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::agent {

// The tools every adapter offers the model, in this order.
const std::vector<llm::tool_spec>& tool_specs();

// One judged version of the workspace: what selection chooses from.
struct judged {
  std::string kind; // "verify" or "profile"
  int turn = 0;
  std::string source_hash; // sha256 of the candidate source
  std::string source;
  std::int64_t candidate_id = 0;
  std::int64_t evaluation_id = 0;
  db::evaluation_record record;
};

// Where in-loop results go: candidates and evaluations as DB rows (the recorder does it under its lock).
struct evaluation_sink {
  std::function<std::int64_t(const std::string& source)> candidate; // its candidate id (recorded once)
  std::function<std::int64_t(results::evaluation_result& result)> evaluation; // its evaluation id
};

struct tool_outcome {
  std::string text; // sent back to the model; its first line is the summary
  bool is_error = false;
  bool submitted = false;
  std::int64_t candidate_id = 0;
  std::int64_t evaluation_id = 0;
  std::string summary() const; // the first line of text
};

// What profile shows besides the evaluation: the problem's cached compiled baselines and the hardware.
struct profile_context {
  std::vector<baseline_time> baselines;
  std::vector<std::string> missing_modes;
  peaks hardware;
};

class toolbox {
public:
  toolbox(const workspace& ws, judge& engine, const kb::problem& problem, evaluation_sink sink,
          profile_context profiling);

  // Runs one tool call of turn `turn`. Bad arguments and refused paths are errors for the model, never
  // exceptions; the engine's own failures (a worker that cannot start) propagate.
  tool_outcome run(const std::string& tool, const nlohmann::json& arguments, int turn);

  const std::vector<judged>& history() const { return m_history; }
  // The workspace's candidate now and its id (recorded on first sight); none without model_new.py.
  std::optional<std::pair<std::string, std::int64_t>> current_candidate();

private:
  tool_outcome list_files() const;
  tool_outcome compile();
  tool_outcome verify(int turn);
  tool_outcome profile(int turn);
  const judged* find(const std::string& kind, const std::string& source_hash) const;
  const judged& remember(std::string kind, int turn, const std::string& source, results::evaluation_result r);

  const workspace& m_workspace;
  judge& m_judge;
  const kb::problem& m_problem;
  evaluation_sink m_sink;
  profile_context m_profiling;
  std::vector<judged> m_history;
  std::map<std::string, std::int64_t> m_candidate_ids; // by source hash
};

} // namespace kj::agent
