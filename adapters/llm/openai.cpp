// OpenAI's two API families, chosen per request by the model table (capabilities.hpp) or --openai-api: the
// Responses API (openai_responses.cpp) for OpenAI's reasoning models, and chat completions (POST
// {base}/chat/completions) as older OpenAI models and compatible servers (vLLM, SGLang) speak it: tool_calls
// with JSON-string arguments, role "tool" results, max_completion_tokens and reasoning_effort for reasoning
// models, streamed with usage; both error-body shapes.
#include "adapters/llm/assemblers.hpp"
#include "adapters/llm/capabilities.hpp"
#include "adapters/llm/json_fields.hpp"
#include "adapters/llm/models.hpp"
#include "adapters/llm/openai_responses.hpp"
#include "adapters/llm/provider.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fmt/ranges.h>

namespace kj::llm {
namespace {

using nlohmann::json;

// The codes with which OpenAI refuses for money, not load: waiting does not help.
bool is_spend_code(const std::string& code) {
  return code == "insufficient_quota" || code == "organization_spend_limit_exceeded" ||
         code == "project_spend_limit_exceeded" || code == "credit_balance_exhausted" ||
         code == "billing_hard_limit_reached";
}

// One chat message per conversation message, except tool results, which are messages of their own.
void encode_message(const message& m, json& messages) {
  if (m.who == role::assistant) {
    json out{{"role", "assistant"}};
    const std::string text = m.text();
    out["content"] = text.empty() ? json() : json(text);
    json calls = json::array();
    for (const part& p : m.parts)
      if (p.type == part::kind::tool_call)
        calls.push_back({{"id", p.call_id},
                         {"type", "function"},
                         {"function",
                          {{"name", p.tool_name},
                           // Arguments that did not parse as JSON travel back as the model wrote them.
                           {"arguments", p.arguments.is_string() ? p.arguments.get<std::string>()
                                                                 : p.arguments.dump()}}}});
    if (text.empty() && calls.empty()) return; // an empty turn: no server takes it back
    if (!calls.empty()) out["tool_calls"] = calls;
    messages.push_back(out);
    return;
  }
  for (const part& p : m.parts)
    if (p.type == part::kind::tool_result)
      messages.push_back({{"role", "tool"}, {"tool_call_id", p.call_id}, {"content", p.text}});
  if (const std::string text = m.text(); !text.empty())
    messages.push_back({{"role", "user"}, {"content", text}});
}

stop_reason map_stop(const std::string& reason) {
  if (reason == "stop") return stop_reason::end_turn;
  if (reason == "length") return stop_reason::max_tokens;
  if (reason == "tool_calls" || reason == "function_call") return stop_reason::tool_use;
  if (reason == "content_filter") return stop_reason::refusal;
  return stop_reason::other;
}

bool is_responses(const wire_request& wire) {
  return wire.url.ends_with("/responses");
}

class openai final : public provider {
public:
  using provider::provider;
  std::string name() const override { return "openai"; }

  wire_request encode(const request& r) const override {
    require_capable("openai", r);
    if (r.api != "" && r.api != "chat" && r.api != "responses")
      throw llm_error("openai", error_kind::config,
                      fmt::format("openai: API '{}' is not responses or chat (--openai-api)", r.api));
    if (openai_api(r) == "responses")
      return {base_url() + "/responses", {"content-type: application/json"}, responses::encode(r)};
    if (!r.tools.empty() && r.effort && models::openai_chat_refuses_tools_with_effort(r.model))
      throw llm_error(
          "openai", error_kind::config,
          fmt::format("openai: {} refuses function tools with an effort on chat completions (\"Please "
                      "use /v1/responses instead\"): leave --openai-api chat out, or --effort",
                      r.model));
    json messages = json::array();
    if (!r.system.empty()) messages.push_back({{"role", "system"}, {"content", r.system}});
    for (const message& m : r.messages)
      encode_message(m, messages);
    json body{{"model", r.model}, {"messages", messages}};
    if (!r.tools.empty()) {
      json tools = json::array();
      for (const tool_spec& t : r.tools)
        tools.push_back(
            {{"type", "function"},
             {"function",
              {{"name", t.name}, {"description", t.description}, {"parameters", t.input_schema}}}});
      body["tools"] = tools;
    }
    // OpenAI's reasoning models reject the deprecated max_tokens; other compatible servers may know only
    // max_tokens. The choice is by model, never by server, so that a recording replays from any base URL.
    if (const auto limit = max_tokens_for("openai", r))
      body[models::openai_reasoning(r.model) ? "max_completion_tokens" : "max_tokens"] = *limit;
    if (r.temperature) body["temperature"] = *r.temperature;
    if (r.effort) {
      const auto& levels = models::effort_levels("openai");
      if (std::find(levels.begin(), levels.end(), *r.effort) == levels.end())
        throw llm_error("openai", error_kind::config,
                        fmt::format("openai: effort '{}' is not one of {} (reasoning_effort)", *r.effort,
                                    fmt::join(levels, ", ")));
      body["reasoning_effort"] = *r.effort;
    }
    return {base_url() + "/chat/completions", {"content-type: application/json"}, std::move(body)};
  }

  // Chat completions: the usage arrives in a last chunk only when asked for. Responses: in the last event.
  void to_stream(wire_request& wire) const override {
    wire.body["stream"] = true;
    if (!is_responses(wire)) wire.body["stream_options"] = {{"include_usage", true}};
  }
  std::unique_ptr<stream_assembler> assembler(const wire_request& wire) const override {
    return is_responses(wire) ? responses::make_assembler() : make_openai_assembler();
  }

  std::vector<std::string> auth_headers() const override {
    return has_key() ? std::vector<std::string>{"authorization: Bearer " + api_key()}
                     : std::vector<std::string>{};
  }

  reply decode(const json& body) const override {
    if (responses::is_response(body)) return responses::decode(body);
    const json& choices = fields::array(body, "choices");
    if (choices.empty()) throw malformed_response("field 'choices' is empty");
    const json& message_json = fields::object(choices[0], "message");
    reply out;
    out.content.who = role::assistant;
    out.content.raw_provider = "openai";
    out.content.raw = message_json;
    // vLLM/SGLang reasoning parsers put the thinking beside the answer.
    for (const char* key : {"reasoning_content", "reasoning"})
      if (const std::string thinking = fields::text(message_json, key); !thinking.empty()) {
        part p;
        p.type = part::kind::thinking;
        p.text = thinking;
        out.content.parts.push_back(p);
        break;
      }
    if (const std::string text = fields::text(message_json, "content"); !text.empty())
      out.content.parts.push_back(part::make_text(text));
    if (const json* calls = fields::find(message_json, "tool_calls"); calls && calls->is_array())
      for (const json& call : *calls) {
        const json& function = fields::object(call, "function");
        const std::string arguments = fields::text(function, "arguments");
        json parsed = json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
        out.content.parts.push_back(part::make_tool_call(fields::text(call, "id"),
                                                         fields::text(function, "name"),
                                                         parsed.is_discarded() ? json(arguments) : parsed));
      }
    out.stop_raw = fields::text(choices[0], "finish_reason");
    out.stop = map_stop(out.stop_raw);
    out.model = fields::text(body, "model");
    out.request_id = fields::text(body, "id");
    if (const json* u = fields::find(body, "usage")) {
      const json* details = fields::find(*u, "prompt_tokens_details");
      const std::int64_t cached = details ? fields::count(*details, "cached_tokens") : 0;
      const json* completion = fields::find(*u, "completion_tokens_details");
      // prompt_tokens includes the cached ones; completion_tokens includes reasoning.
      out.tokens = {fields::count(*u, "prompt_tokens") - cached, cached, 0,
                    fields::count(*u, "completion_tokens"),
                    completion ? fields::count(*completion, "reasoning_tokens") : 0};
    }
    return out;
  }

  failure decode_failure(const http_response& response) const override {
    json error;
    failure f = generic_failure(*this, response, &error);
    for (const char* key : {"code", "type"})
      if (const json* value = fields::find(error, key);
          value && value->is_string() && is_spend_code(value->get<std::string>()))
        f.kind = error_kind::spend_limit;
    return f;
  }
};

} // namespace

std::unique_ptr<provider> make_openai(const std::string& base_url, const std::string& api_key) {
  return std::make_unique<openai>(base_url, api_key);
}

} // namespace kj::llm
