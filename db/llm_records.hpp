// Records of the LLM adapters' tables (schema v4): exchanges with providers, candidate origins, cost totals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kj::db {

// One call to a provider as it went on the wire: the request body (no secrets: keys travel in headers that
// are never stored), the response body, the usage in four buckets and what it cost. `request_hash` hashes the
// request content; `seq` tells identical requests apart (the N samples of one prompt), so (request_hash, seq)
// finds a recorded answer again.
struct llm_exchange_record {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string provider; // anthropic, gemini, openai
  std::string model;
  std::string endpoint; // URL without credentials or query
  std::string request_hash;
  int seq = 0;
  std::string purpose; // for people, e.g. "L1/19_ReLU.py sample 2"
  std::string request_json;
  std::optional<std::int64_t> http_status; // of the last attempt; none when no response came
  std::string response_body;               // of the last attempt
  bool ok = false;
  std::string error_kind; // "" when ok; else auth, spend_limit, rate_limit, overloaded, server, ...
  std::string error;
  std::string request_id; // the provider's id of the last attempt, "" when it gave none
  std::string stop_reason;
  std::int64_t input_tokens = 0;       // fresh input
  std::int64_t cache_read_tokens = 0;  // input read from the provider's prompt cache
  std::int64_t cache_write_tokens = 0; // input written to the prompt cache
  std::int64_t output_tokens = 0;      // output, thinking included
  std::int64_t reasoning_tokens = 0;   // of which thinking, where the provider counts it
  std::optional<double> cost_usd;      // none: no price for this model in the price table
  double latency_ms = 0;               // [ms] the last attempt
  double total_ms = 0;                 // [ms] all attempts and the waits between them
  int attempts = 0;
  std::string attempts_json = "[]"; // the failed attempts before the last: status, error, wait
  std::string started_at, finished_at;
};

// Where a generated candidate came from, within one run (a replayed run names the recorded exchange).
struct candidate_origin_record {
  std::int64_t candidate_id = 0;
  std::int64_t run_id = 0;
  std::int64_t exchange_id = 0; // 0: none
  std::string adapter;          // anthropic, gemini, openai, or replay
  std::string model;
  std::string prompt_hash;
  int sample = 0;
  std::string request_id;
  std::string extraction; // "code" or "no_code"
  std::string detail;     // why there was no code; "" otherwise
};

// The settings a run generated with (one row per run): what a replay needs to send the same requests.
struct llm_generation_record {
  std::int64_t run_id = 0;
  std::string adapter; // the adapter whose wire format the exchanges use (a replay: the recorded run's)
  std::string model;
  std::int64_t replayed_from = 0; // the run whose recording answered; 0 when the exchanges were live
  std::string settings_json;      // model, samples, temperature, max tokens, device, prompt version, ...
};

// A provider batch a run submitted (kj generate --batch): recorded before it is polled. `items_json` maps
// each custom_id to the request it stands for ({"custom_id": {"hash": ..., "seq": N, "purpose": ...}}).
struct llm_batch_record {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string provider;
  std::string batch_id;
  std::string status; // the provider's last status; "collected" once its answers are recorded
  std::string items_json = "{}";
  std::string created_at, finished_at;
};

// One provider and model's totals over the exchanges a run used (its own, and the recorded ones it replayed).
struct llm_cost_row {
  std::string provider, model;
  std::int64_t calls = 0, failed_calls = 0, unpriced_calls = 0;
  std::int64_t input_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0, output_tokens = 0;
  std::int64_t reasoning_tokens = 0; // of output_tokens, where the provider counts them
  double cost_usd = 0;               // of the priced calls
  double latency_ms = 0;             // [ms] summed over calls (all attempts)
  std::int64_t problems = 0;         // problems with a candidate of this model in the run
  std::int64_t solved = 0;           // ... with at least one compatible verdict `correct`
  std::int64_t solved_strict = 0;    // ... counted correct (kj::counted_correct: strict did not fail)
  std::int64_t replayed_calls = 0;   // exchanges recorded by another run (no money spent by this one)
  std::int64_t batch_calls = 0;      // answered through a provider's batch API (priced at the batch tier)
};

} // namespace kj::db
