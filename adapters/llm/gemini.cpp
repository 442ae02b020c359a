// Gemini's generateContent (POST /v1beta/models/{model}:generateContent, or :streamGenerateContent?alt=sse):
// contents of parts, functionCall answered by functionResponse, tool schemas as full JSON Schema
// (parametersJsonSchema), thoughtSignature kept on every part and sent back, thinking by level (Gemini 3)
// or budget (2.5), RetryInfo on 429, and no empty model turn ever sent back.
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

[[noreturn]] void refuse(const std::string& why) {
  throw llm_error("gemini", error_kind::config, "gemini: " + why);
}

// A tool's declaration. Its arguments' JSON Schema goes in parametersJsonSchema: `parameters` takes only
// an OpenAPI subset (no additionalProperties), which a real server answers with 400. A tool without
// arguments leaves it unset.
json declaration(const tool_spec& t) {
  json d{{"name", t.name}, {"description", t.description}};
  const json* properties = fields::find(t.input_schema, "properties");
  if (properties && !properties->empty()) d["parametersJsonSchema"] = t.input_schema;
  return d;
}

// generationConfig.thinkingConfig: thinkingLevel for Gemini 3 and later, thinkingBudget before; the two
// together are rejected with 400.
json thinking_config(const request& r) {
  const models::gemini_thinking kind = models::gemini(r.model);
  if (r.thinking_budget && r.effort) refuse("give a thinking budget or an effort level, not both");
  if (r.thinking_budget) {
    if (kind == models::gemini_thinking::level)
      refuse(fmt::format("{} thinks by level (thinkingLevel); thinkingBudget is for Gemini 2.5: use --effort "
                         "{} instead of --thinking-tokens",
                         r.model, fmt::join(models::effort_levels("gemini"), "|")));
    if (*r.thinking_budget == 0) return {{"thinkingBudget", 0}};                // no thinking
    return {{"thinkingBudget", *r.thinking_budget}, {"includeThoughts", true}}; // thought summaries kept
  }
  if (r.effort) {
    const auto& levels = models::effort_levels("gemini");
    if (std::find(levels.begin(), levels.end(), *r.effort) == levels.end())
      refuse(fmt::format("effort '{}' is not one of {} (thinkingLevel)", *r.effort, fmt::join(levels, ", ")));
    if (kind == models::gemini_thinking::budget)
      refuse(fmt::format("{} takes a thinking budget (--thinking-tokens), not a level", r.model));
    return {{"thinkingLevel", *r.effort}, {"includeThoughts", true}}; // thought summaries kept
  }
  return json();
}

json encode_part(const part& p) {
  json out;
  switch (p.type) {
  case part::kind::text:
    out = {{"text", p.text}};
    break;
  case part::kind::thinking:
    out = {{"text", p.text}, {"thought", true}};
    break;
  case part::kind::tool_call: {
    json call{{"name", p.tool_name}, {"args", p.arguments.is_null() ? json::object() : p.arguments}};
    if (!p.call_id.empty()) call["id"] = p.call_id;
    out = {{"functionCall", call}};
    break;
  }
  case part::kind::tool_result: {
    json response{{"name", p.tool_name}, {"response", {{p.is_error ? "error" : "output", p.text}}}};
    if (!p.call_id.empty()) response["id"] = p.call_id;
    out = {{"functionResponse", response}};
    break;
  }
  }
  if (!p.signature.empty()) out["thoughtSignature"] = p.signature;
  return out;
}

part decode_part(const json& raw) {
  part p;
  p.signature = fields::text(raw, "thoughtSignature");
  if (const json* call = fields::find(raw, "functionCall")) {
    const json* args = fields::find(*call, "args");
    const std::string signature = p.signature;
    p = part::make_tool_call(fields::text(*call, "id"), fields::text(*call, "name"),
                             args ? *args : json::object());
    p.signature = signature;
    return p;
  }
  p.text = fields::text(raw, "text");
  // A thought summary, or a part that carries only a signature: state to send back, not answer text.
  const json* thought = fields::find(raw, "thought");
  if ((thought && thought->is_boolean() && thought->get<bool>()) ||
      (!raw.contains("text") && !p.signature.empty()))
    p.type = part::kind::thinking;
  return p;
}

stop_reason map_stop(const std::string& reason, bool called_tools) {
  // The model's own call was rejected: nothing to run, nothing to send back.
  if (reason == "MALFORMED_FUNCTION_CALL" || reason == "UNEXPECTED_TOOL_CALL" ||
      reason == "TOO_MANY_TOOL_CALLS")
    return stop_reason::tool_call_error;
  if (called_tools) return stop_reason::tool_use; // Gemini says STOP after a function call
  if (reason == "STOP") return stop_reason::end_turn;
  if (reason == "MAX_TOKENS") return stop_reason::max_tokens;
  if (reason == "SAFETY" || reason == "RECITATION" || reason == "BLOCKLIST" ||
      reason == "PROHIBITED_CONTENT" || reason == "SPII" || reason == "IMAGE_SAFETY")
    return stop_reason::refusal;
  return stop_reason::other;
}

class gemini final : public provider {
public:
  using provider::provider;
  std::string name() const override { return "gemini"; }

  wire_request encode(const request& r) const override {
    require_capable("gemini", r);
    json contents = json::array();
    for (const message& m : r.messages) {
      const json* raw_parts = m.raw.is_object() ? fields::find(m.raw, "parts") : nullptr;
      if (m.who == role::assistant && m.raw_provider == "gemini" && raw_parts && !raw_parts->empty()) {
        contents.push_back(m.raw);
        continue;
      }
      json parts = json::array();
      for (const part& p : m.parts)
        parts.push_back(encode_part(p));
      if (parts.empty()) continue; // a blocked or rejected turn: Gemini refuses a content without parts
      contents.push_back({{"role", m.who == role::user ? "user" : "model"}, {"parts", parts}});
    }
    json body{{"contents", contents}};
    if (!r.system.empty()) body["systemInstruction"] = {{"parts", json::array({{{"text", r.system}}})}};
    if (!r.tools.empty()) {
      json declarations = json::array();
      for (const tool_spec& t : r.tools)
        declarations.push_back(declaration(t));
      body["tools"] = json::array({{{"functionDeclarations", declarations}}});
    }
    json config = json::object();
    if (const auto limit = max_tokens_for("gemini", r)) config["maxOutputTokens"] = *limit;
    if (r.temperature) config["temperature"] = *r.temperature;
    if (json thinking = thinking_config(r); !thinking.is_null()) config["thinkingConfig"] = thinking;
    if (!config.empty()) body["generationConfig"] = config;
    std::string model = r.model;
    if (model.rfind("models/", 0) == 0) model.erase(0, 7);
    return {base_url() + "/v1beta/models/" + model + ":generateContent",
            {"content-type: application/json"},
            std::move(body)};
  }

  void to_stream(wire_request& wire) const override {
    const std::string method = ":generateContent";
    if (wire.url.ends_with(method))
      wire.url.replace(wire.url.size() - method.size(), method.size(), ":streamGenerateContent?alt=sse");
  }
  std::unique_ptr<stream_assembler> assembler(const wire_request&) const override {
    return make_gemini_assembler();
  }

  std::vector<std::string> auth_headers() const override {
    return has_key() ? std::vector<std::string>{"x-goog-api-key: " + api_key()} : std::vector<std::string>{};
  }

  reply decode(const json& body) const override {
    reply out;
    out.content.who = role::assistant;
    out.content.raw_provider = "gemini";
    out.model = fields::text(body, "modelVersion");
    out.request_id = fields::text(body, "responseId");
    const json* candidates = fields::find(body, "candidates");
    if (!candidates || candidates->empty()) { // the prompt itself was blocked
      if (!fields::find(body, "promptFeedback"))
        throw malformed_response("no candidates and no promptFeedback");
      const json& feedback = fields::object(body, "promptFeedback");
      out.stop = stop_reason::refusal;
      out.stop_raw = fields::text(feedback, "blockReason");
      out.stop_detail = "the prompt was blocked (promptFeedback.blockReason " + out.stop_raw + ")";
    } else {
      if (!candidates->is_array()) throw malformed_response("field 'candidates' is not an array");
      const json& first = (*candidates)[0];
      bool called_tools = false;
      if (const json* content = fields::find(first, "content")) {
        if (const json* parts = fields::find(*content, "parts"); parts && parts->is_array())
          for (const json& raw : *parts) {
            out.content.parts.push_back(decode_part(raw));
            called_tools |= out.content.parts.back().type == part::kind::tool_call;
          }
        if (!out.content.parts.empty()) out.content.raw = *content; // an empty turn is never sent back
      }
      out.stop_raw = fields::text(first, "finishReason");
      out.stop_detail = fields::text(first, "finishMessage");
      out.stop = map_stop(out.stop_raw, called_tools);
    }
    const json& u = fields::object(body, "usageMetadata");
    const std::int64_t cached = fields::count(u, "cachedContentTokenCount");
    // promptTokenCount includes the cached tokens; thinking is billed as output.
    const std::int64_t thoughts = fields::count(u, "thoughtsTokenCount");
    out.tokens = {fields::count(u, "promptTokenCount") - cached + fields::count(u, "toolUsePromptTokenCount"),
                  cached, 0, fields::count(u, "candidatesTokenCount") + thoughts, thoughts};
    return out;
  }

  failure decode_failure(const http_response& response) const override {
    json error;
    failure f = generic_failure(*this, response, &error);
    // An invalid key is a 400 INVALID_ARGUMENT whose ErrorInfo says API_KEY_INVALID.
    if (const json* details = fields::find(error, "details"); details && details->is_array())
      for (const json& d : *details)
        if (d.is_object() && d.value("reason", json()).is_string() &&
            d["reason"].get<std::string>().find("API_KEY") != std::string::npos)
          f.kind = error_kind::auth;
    if (error.value("status", json()) == "PERMISSION_DENIED" ||
        error.value("status", json()) == "UNAUTHENTICATED")
      f.kind = error_kind::auth;
    return f;
  }
};

} // namespace

std::unique_ptr<provider> make_gemini(const std::string& base_url, const std::string& api_key) {
  return std::make_unique<gemini>(base_url, api_key);
}

} // namespace kj::llm
