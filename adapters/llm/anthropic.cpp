// Anthropic's Messages API (POST /v1/messages, streamed with "stream": true): content blocks,
// tool_use/tool_result, thinking as each model documents it (a budget up to 4.6, adaptive with an effort from
// 4.6 on) with its blocks passed back with their signatures, prompt-caching breakpoints, and spend limits
// told apart from rate limits.
#include "adapters/llm/assemblers.hpp"
#include "adapters/llm/capabilities.hpp"
#include "adapters/llm/json_fields.hpp"
#include "adapters/llm/models.hpp"
#include "adapters/llm/provider.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>

namespace kj::llm {
namespace {

using nlohmann::json;

// Anthropic requires max_tokens; this is enough for a kernel with some thinking.
constexpr int default_max_tokens = 16384;
// The smallest thinking budget the Messages API accepts (extended-thinking documentation).
constexpr int min_thinking_budget = 1024;

[[noreturn]] void refuse(const std::string& why) {
  throw llm_error("anthropic", error_kind::config, "anthropic: " + why);
}

// thinking / output_config as the model documents them; refuses (before sending) what it would reject
// with 400: a budget where only adaptive thinking exists, a budget under 1024 or not below max_tokens,
// thinking beside a custom temperature, a temperature where sampling parameters were removed.
void encode_thinking(const request& r, int max_tokens, json& body) {
  const models::claude_controls can = models::claude(r.model);
  const bool budget = r.thinking_budget && *r.thinking_budget > 0; // 0: no thinking
  if (budget && r.effort) refuse("give a thinking budget or an effort level, not both");
  if (r.temperature && !can.sampling)
    refuse(fmt::format("{} no longer accepts a temperature (sampling parameters were removed in Claude 4.7): "
                       "leave --temperature out",
                       r.model));
  if ((budget || (r.effort && can.adaptive)) && r.temperature)
    refuse("thinking is not compatible with a custom temperature: leave --temperature out");
  if (budget) {
    if (!can.budget)
      refuse(fmt::format("{} takes adaptive thinking only (a thinking budget is rejected with 400): use "
                         "--effort {} instead of --thinking-tokens",
                         r.model, fmt::join(models::effort_levels("anthropic"), "|")));
    if (*r.thinking_budget < min_thinking_budget)
      refuse(fmt::format("a thinking budget must be at least {} tokens (got {})", min_thinking_budget,
                         *r.thinking_budget));
    if (*r.thinking_budget >= max_tokens)
      refuse(fmt::format("the thinking budget ({}) must be below max_tokens ({}): raise --max-tokens",
                         *r.thinking_budget, max_tokens));
    body["thinking"] = {{"type", "enabled"}, {"budget_tokens", *r.thinking_budget}};
  }
  if (r.effort) {
    const auto& levels = models::effort_levels("anthropic");
    if (std::find(levels.begin(), levels.end(), *r.effort) == levels.end())
      refuse(fmt::format("effort '{}' is not one of {}", *r.effort, fmt::join(levels, ", ")));
    if (!can.effort)
      refuse(fmt::format("{} takes no effort level (Claude Opus 4.5, and 4.6 or later, do): use "
                         "--thinking-tokens",
                         r.model));
    // Opus 4.7 and later omit the thinking text unless asked: its summary is kept in the transcript.
    if (can.adaptive) body["thinking"] = {{"type", "adaptive"}, {"display", "summarized"}};
    body["output_config"] = {{"effort", *r.effort}};
  }
}

json encode_part(const part& p) {
  switch (p.type) {
  case part::kind::text:
    return {{"type", "text"}, {"text", p.text}};
  case part::kind::thinking:
    if (p.redacted) return {{"type", "redacted_thinking"}, {"data", p.signature}};
    return {{"type", "thinking"}, {"thinking", p.text}, {"signature", p.signature}};
  case part::kind::tool_call:
    return {{"type", "tool_use"}, {"id", p.call_id}, {"name", p.tool_name}, {"input", p.arguments}};
  case part::kind::tool_result: {
    json block{{"type", "tool_result"}, {"tool_use_id", p.call_id}, {"content", p.text}};
    if (p.is_error) block["is_error"] = true;
    return block;
  }
  }
  return json::object();
}

part decode_block(const json& block) {
  const std::string type = fields::text(block, "type");
  part p;
  if (type == "text") {
    p.text = fields::text(block, "text");
  } else if (type == "thinking") {
    p.type = part::kind::thinking;
    p.text = fields::text(block, "thinking");
    p.signature = fields::text(block, "signature");
  } else if (type == "redacted_thinking") {
    p.type = part::kind::thinking;
    p.redacted = true;
    p.signature = fields::text(block, "data");
  } else if (type == "tool_use") {
    const json* input = fields::find(block, "input");
    p = part::make_tool_call(fields::text(block, "id"), fields::text(block, "name"),
                             input ? *input : json::object());
  } else {
    throw std::out_of_range(type); // a block we do not model (server tools): kept in `raw` only
  }
  return p;
}

stop_reason map_stop(const std::string& reason) {
  if (reason == "end_turn") return stop_reason::end_turn;
  if (reason == "max_tokens") return stop_reason::max_tokens;
  if (reason == "tool_use") return stop_reason::tool_use;
  if (reason == "stop_sequence") return stop_reason::stop_sequence;
  if (reason == "refusal") return stop_reason::refusal;
  if (reason == "model_context_window_exceeded") return stop_reason::context_exceeded;
  return stop_reason::other; // pause_turn, ...
}

class anthropic final : public provider {
public:
  using provider::provider;
  std::string name() const override { return "anthropic"; }

  wire_request encode(const request& r) const override {
    require_capable("anthropic", r);
    const int max_tokens = max_tokens_for("anthropic", r).value_or(default_max_tokens);
    json body{{"model", r.model}, {"max_tokens", max_tokens}};
    if (!r.system.empty()) {
      json block{{"type", "text"}, {"text", r.system}};
      if (r.cache_prompt) block["cache_control"] = {{"type", "ephemeral"}};
      body["system"] = json::array({block});
    }
    json messages = json::array();
    for (const message& m : r.messages) {
      json content = json::array();
      if (m.who == role::assistant && m.raw_provider == "anthropic" && m.raw.is_array())
        content = m.raw;
      else
        for (const part& p : m.parts)
          content.push_back(encode_part(p));
      if (content.empty()) continue; // an empty turn: the API refuses empty content
      messages.push_back({{"role", m.who == role::user ? "user" : "assistant"}, {"content", content}});
    }
    // A breakpoint on the last turn caches the whole prefix for the next call (samples, agent turns).
    if (r.cache_prompt && !messages.empty() && !messages.back()["content"].empty())
      messages.back()["content"].back()["cache_control"] = {{"type", "ephemeral"}};
    body["messages"] = messages;
    if (!r.tools.empty()) {
      json tools = json::array();
      for (const tool_spec& t : r.tools)
        tools.push_back({{"name", t.name}, {"description", t.description}, {"input_schema", t.input_schema}});
      body["tools"] = tools;
    }
    encode_thinking(r, max_tokens, body);
    if (r.temperature) body["temperature"] = *r.temperature;
    std::vector<std::string> headers{"content-type: application/json", "anthropic-version: 2023-06-01"};
    if (r.context_edit) {
      const context_editing& e = *r.context_edit;
      body["context_management"] = {
          {"edits",
           json::array({{{"type", "clear_tool_uses_20250919"},
                         {"trigger", {{"type", "input_tokens"}, {"value", e.trigger_tokens}}},
                         {"keep", {{"type", "tool_uses"}, {"value", e.keep_tool_uses}}},
                         {"clear_at_least", {{"type", "input_tokens"}, {"value", e.clear_at_least}}}}})}};
      headers.push_back("anthropic-beta: context-management-2025-06-27");
    }
    return {base_url() + "/v1/messages", std::move(headers), std::move(body)};
  }

  void to_stream(wire_request& wire) const override { wire.body["stream"] = true; }
  std::unique_ptr<stream_assembler> assembler(const wire_request&) const override {
    return make_anthropic_assembler();
  }

  std::vector<std::string> auth_headers() const override {
    return has_key() ? std::vector<std::string>{"x-api-key: " + api_key()} : std::vector<std::string>{};
  }

  reply decode(const json& body) const override {
    if (fields::text(body, "type") == "error") throw malformed_response("an error object with a 2xx status");
    reply out;
    out.content.who = role::assistant;
    out.content.raw_provider = "anthropic";
    out.content.raw = fields::array(body, "content");
    for (const json& block : out.content.raw) {
      try {
        out.content.parts.push_back(decode_block(block));
      } catch (const std::out_of_range&) {
      }
    }
    out.stop_raw = fields::text(body, "stop_reason");
    out.stop = map_stop(out.stop_raw);
    out.model = fields::text(body, "model");
    const json& u = fields::object(body, "usage");
    out.tokens = {fields::count(u, "input_tokens"), fields::count(u, "cache_read_input_tokens"),
                  fields::count(u, "cache_creation_input_tokens"), fields::count(u, "output_tokens")};
    return out;
  }

  failure decode_failure(const http_response& response) const override {
    json error;
    failure f = generic_failure(*this, response, &error);
    // A spend cap answers 429 like a rate limit (with details.error_code) or 400 like a bad request.
    const json* details = fields::find(error, "details");
    if (details && details->is_object() && details->value("error_code", "") == "enforced_spend_limit_reached")
      f.kind = error_kind::spend_limit;
    if (response.status == 400 && f.message.find("reached your specified") != std::string::npos)
      f.kind = error_kind::spend_limit;
    if (error.value("type", "") == "billing_error") f.kind = error_kind::spend_limit;
    return f;
  }
};

} // namespace

std::unique_ptr<provider> make_anthropic(const std::string& base_url, const std::string& api_key) {
  return std::make_unique<anthropic>(base_url, api_key);
}

} // namespace kj::llm
