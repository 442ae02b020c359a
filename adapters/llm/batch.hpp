// Batch generation: many requests sent as one provider batch, answered within hours at the batch price tier
// (half the standard price at each provider). Anthropic Message Batches (POST /v1/messages/batches, results
// as JSONL at results_url), OpenAI's Batch API (the requests uploaded as a JSONL file, POST /v1/batches, the
// output file's JSONL) and Gemini's batch mode (requests inlined in batchGenerateContent, answers inlined in
// the finished operation). A batch is identified by its id: recorded before polling, so that a
// killed generation resumes polling the same batch, and nothing is billed twice.
#pragma once

#include "adapters/llm/provider.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::llm {

struct batch_item {
  std::string custom_id; // item_id(i) for the i-th item of the batch; ties an answer to its request
  wire_request wire;     // the request as it would be sent alone
};

struct batch_status {
  std::string id;
  std::string status;  // the provider's: in_progress, ended (Anthropic); validating, ..., completed (OpenAI)
  bool ended = false;  // no more answers will come (completed, failed, expired, cancelled)
  std::string results; // where the answers are: Anthropic's results_url, OpenAI's output file id
  std::string errors;  // OpenAI's error file id ("" none)
  std::string detail;  // counts or errors the provider reported, for people
};

struct batch_answer {
  std::string custom_id;
  bool ok = false;
  long status = 0;     // the HTTP status the request would have had (OpenAI), 200 for a success
  nlohmann::json body; // the provider's response body, as the request alone would have returned it
  std::string error;   // why not ok: the provider's error, or canceled / expired
  std::string request_id;
};

class batch_api {
public:
  virtual ~batch_api() = default;
  // Submits the items; returns the batch id. Throws llm_error when the provider refuses.
  virtual std::string submit(const std::vector<batch_item>& items) = 0;
  virtual batch_status poll(const std::string& id) = 0;
  // The answers of an ended batch, one per item it processed.
  virtual std::vector<batch_answer> answers(const batch_status& status) = 0;
};

// The custom id of a batch's i-th item: "kj-<i>" (Gemini may answer by order alone).
std::string item_id(std::size_t index);

// The batch API of `wire`'s provider: Anthropic Message Batches, OpenAI's Batch API, Gemini's batch mode.
std::unique_ptr<batch_api> make_batch_api(const provider& wire);

} // namespace kj::llm
