// One-shot generation: for each problem, our prompt sent to an LLM adapter N times, the code block of each
// reply stored as a candidate with its provenance (or as a `no_code` candidate), under a budget.
#pragma once

#include "adapters/candidates.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kj::adapters {

struct generation_options {
  std::string adapter; // "" (no generation), anthropic, gemini, openai, or replay
  std::string model;
  std::string base_url; // "" the provider's default
  int samples = 1;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::optional<int> thinking_budget;
  std::optional<std::string> effort; // thinking level: Anthropic effort, Gemini 3 thinkingLevel, OpenAI
  std::string openai_api;            // OpenAI's API family, "responses" or "chat"; "" by the model table
  std::string stream = "auto";      // auto (long generations), always or never: answers as server-sent events
  int concurrency = 4;              // calls in flight at once
  std::optional<double> budget_usd; // stop issuing calls once the run has spent this much
  std::filesystem::path prices_path; // "" the shipped default (adapters/prices.json)
  std::string replay_from;           // adapter "replay": the run whose recording answers
  double connect_timeout_s = 10;
  double request_timeout_s = 600;
  int max_retries = 6;
  double retry_base_s = 1; // first backoff of a retry without a server-given delay
  double max_retry_wait_s = 300;
  // Pacing: requests and tokens per minute (the provider's rate-limit headers count either way).
  std::optional<double> rpm, tpm;
  bool batch = false;       // one provider batch at the batch price (kj generate --batch)
  double batch_poll_s = 30; // [s] between polls of a batch

  bool active() const { return !adapter.empty(); }
};

struct generation_result {
  std::vector<candidate> candidates; // problem order, then sample order; `no_code` ones included
  std::string producer;              // "<adapter>/<model>"
  int calls_failed = 0;              // samples whose call failed after its retries (no candidate)
  int not_generated = 0;             // samples never asked for: the budget was reached, or Ctrl-C
  bool budget_reached = false;
  bool interrupted = false;
};

// Pre-flight: encodes a request with these settings (model, effort, thinking budget, temperature, token
// limit) as the adapter would, sending nothing, and throws the adapter's llm_error (config) when the provider
// documents that request as invalid for the model (an effort level it lacks, a thinking budget where only
// adaptive thinking exists, ...). Nothing for adapter "replay" or no adapter.
void preflight(const generation_options& options, bool with_tools = false);

// Generates (or, for adapter "replay", replays) candidates for the problems into run `run_id`: exchanges in
// llm_exchanges, candidates with their origins, the settings in llm_generations. `problem_ids` are the DB ids
// of `problems`, in order. `device` ("cpu"/"cuda") picks the prompt's extension kind (a replay uses the
// recorded one). Throws kb::source_error for bad options (unknown adapter, missing key, unreadable prices,
// unknown replay run) before any call, and std::runtime_error (llm_error) when a call fails in a way no later
// call can recover from (auth, spend limit, unknown model); what was generated until then is stored.
generation_result generate_candidates(db::store& store, std::int64_t run_id,
                                      const std::vector<kb::problem>& problems,
                                      const std::vector<std::int64_t>& problem_ids,
                                      const generation_options& options, const std::string& device,
                                      const std::function<bool()>& cancelled = {});

// Writes each candidate with code as `level_{L}_problem_{N}_sample_{S}_kernel.py` (KernelBench's names)
// into `dir`, creating it; returns how many files were written.
int write_kernelbench_files(const std::filesystem::path& dir, const std::vector<kb::problem>& problems,
                            const std::vector<candidate>& candidates);

} // namespace kj::adapters
