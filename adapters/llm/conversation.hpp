// The provider-neutral conversation every LLM adapter speaks: messages of text, thinking, tool calls and tool
// results in; a reply with its stop reason, token usage and latency out.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::llm {

enum class role { user, assistant };

// One piece of a message; which fields matter depends on `type`.
struct part {
  enum class kind { text, thinking, tool_call, tool_result };
  kind type = kind::text;
  std::string text; // text; thinking's text; a tool result's content
  // Opaque provider state that must travel back unchanged: Anthropic's thinking signature (or a redacted
  // thinking block's data), Gemini's thoughtSignature (on any part).
  std::string signature;
  bool redacted = false;    // Anthropic redacted_thinking: `signature` holds its data
  std::string call_id;      // tool_call: the provider's id; tool_result: the id of the call it answers
  std::string tool_name;    // tool_call and tool_result
  nlohmann::json arguments; // tool_call: the arguments object
  bool is_error = false;    // tool_result: the tool failed

  static part make_text(std::string text);
  static part make_tool_call(std::string id, std::string name, nlohmann::json arguments);
  static part make_tool_result(std::string call_id, std::string name, std::string content,
                               bool is_error = false);
};

struct message {
  role who = role::user;
  std::vector<part> parts;
  // An assistant turn as its provider encoded it (Anthropic's content blocks, Gemini's content, OpenAI's
  // message), sent back verbatim to the same provider so that signatures and block types we do not model
  // survive a round trip. Other providers get `parts`.
  std::string raw_provider;
  nlohmann::json raw;

  static message user_text(std::string text);
  std::string text() const; // the text parts, concatenated
};

// A tool the model may call (issue 16's agent tools: list_files, read_file, compile, ...).
struct tool_spec {
  std::string name;
  std::string description;
  nlohmann::json input_schema = nlohmann::json::object(); // JSON Schema of the arguments object
};

// Provider-side context editing, where the provider offers it (Anthropic's clear_tool_uses strategy, a beta):
// once the prompt exceeds `trigger_tokens`, the provider clears the oldest tool results before the model sees
// them, keeping the newest `keep_tool_uses`. The conversation sent stays whole. Others ignore it.
struct context_editing {
  std::int64_t trigger_tokens = 100'000;
  int keep_tool_uses = 3;
  std::int64_t clear_at_least = 10'000; // clearing invalidates the prompt cache: make each clearing worth it
};

struct request {
  std::string model;
  std::string system;
  std::vector<message> messages;
  std::vector<tool_spec> tools;
  std::optional<int> max_tokens;      // unset: the provider's default (Anthropic, which requires one: 16384)
  std::optional<double> temperature;  // unset: not sent (some models refuse non-default sampling)
  std::optional<int> thinking_budget; // tokens of extended thinking; unset: the model's default
  // How hard the model thinks, where it is a level (Anthropic output_config.effort with adaptive thinking,
  // Gemini 3 thinkingLevel, OpenAI reasoning_effort); unset: the model's default.
  std::optional<std::string> effort;
  bool cache_prompt = true; // Anthropic: cache breakpoints on the system prompt and the last turn
  std::optional<context_editing> context_edit; // unset: none
  // OpenAI's API family: "responses" or "chat" (chat completions); "" = by the model table
  // (capabilities.hpp).
  std::string api;
};

// Tokens of one call in four buckets (docs/adapters.md maps each provider's usage fields onto them).
struct usage {
  std::int64_t input = 0;       // fresh input, billed at the input price
  std::int64_t cache_read = 0;  // input served from the prompt cache
  std::int64_t cache_write = 0; // input written to the prompt cache
  std::int64_t output = 0;      // output, thinking included
  std::int64_t reasoning = 0;   // of which thinking, where the provider counts it (already in `output`)
  usage& operator+=(const usage& other);
  std::int64_t prompt() const { return input + cache_read + cache_write; }
};

// tool_call_error: the provider rejected the model's own function call (Gemini's MALFORMED_FUNCTION_CALL,
// UNEXPECTED_TOOL_CALL, TOO_MANY_TOOL_CALLS): the turn holds nothing to send back; tell the model instead.
enum class stop_reason {
  end_turn,
  max_tokens,
  tool_use,
  stop_sequence,
  refusal,
  context_exceeded,
  tool_call_error,
  other
};
std::string to_string(stop_reason reason);

struct reply {
  message content; // the assistant turn; append it to the conversation to go on
  stop_reason stop = stop_reason::other;
  std::string stop_raw;    // the provider's own stop reason
  std::string stop_detail; // the provider's explanation, if any (Gemini's finishMessage, a block reason)
  usage tokens;
  std::string model;      // as the provider reported it
  std::string request_id; // the provider's request id, "" when it gave none
  double latency_ms = 0;  // [ms] the successful attempt
  double total_ms = 0;    // [ms] all attempts and the waits between them
  int attempts = 1;
  std::optional<double> cost_usd; // none when the price table has no price for the model
  bool replayed = false;          // read from a recording, not sent
  std::int64_t exchange_id = 0;   // the recorded exchange (0 when not recorded)

  std::string text() const; // the text parts, concatenated
  // Whether the turn holds nothing (a blocked prompt, a rejected function call): such a turn must not be
  // appended to the conversation, whose providers refuse an empty model turn.
  bool empty() const { return content.parts.empty(); }
  std::vector<part> tool_calls() const;
};

} // namespace kj::llm
