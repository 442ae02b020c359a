// Implements the Responses API's body and answer (platform.openai.com/docs/api-reference/responses, the
// reasoning guide's "keeping reasoning items in context", the function-calling guide).
#include "adapters/llm/openai_responses.hpp"

#include "adapters/llm/capabilities.hpp"
#include "adapters/llm/json_fields.hpp"
#include "adapters/llm/models.hpp"

#include <fmt/core.h>

namespace kj::llm::responses {
namespace {

using nlohmann::json;

// An assistant turn: the answer's own output items when it came from this API (reasoning with its encrypted
// content, function calls with their ids), else items rebuilt from its parts (no reasoning to carry).
void encode_assistant(const message& m, json& input) {
  if (m.raw_provider == raw_tag && m.raw.is_array()) {
    for (const json& item : m.raw)
      input.push_back(item);
    return;
  }
  if (const std::string text = m.text(); !text.empty())
    input.push_back({{"role", "assistant"}, {"content", text}});
  for (const part& p : m.parts)
    if (p.type == part::kind::tool_call)
      input.push_back(
          {{"type", "function_call"},
           {"call_id", p.call_id},
           {"name", p.tool_name},
           {"arguments", p.arguments.is_string() ? p.arguments.get<std::string>() : p.arguments.dump()}});
}

void encode_user(const message& m, json& input) {
  for (const part& p : m.parts)
    if (p.type == part::kind::tool_result)
      input.push_back({{"type", "function_call_output"}, {"call_id", p.call_id}, {"output", p.text}});
  if (const std::string text = m.text(); !text.empty())
    input.push_back({{"role", "user"}, {"content", text}});
}

part reasoning_part(const json& item) {
  part p;
  p.type = part::kind::thinking;
  if (const json* summary = fields::find(item, "summary"); summary && summary->is_array())
    for (const json& s : *summary)
      p.text += (p.text.empty() ? "" : "\n\n") + fields::text(s, "text");
  p.signature = fields::text(item, "encrypted_content");
  return p;
}

// The stop reason: an incomplete answer says why; a completed one stopped for its function calls, if any.
stop_reason stop_of(const json& body, bool calls, std::string& raw) {
  raw = fields::text(body, "status");
  if (raw == "incomplete") {
    const json* details = fields::find(body, "incomplete_details");
    const std::string why = details ? fields::text(*details, "reason") : "";
    raw += why.empty() ? "" : ": " + why;
    if (why == "max_output_tokens") return stop_reason::max_tokens;
    if (why == "content_filter") return stop_reason::refusal;
    return stop_reason::other;
  }
  if (raw == "completed") return calls ? stop_reason::tool_use : stop_reason::end_turn;
  return stop_reason::other;
}

} // namespace

bool is_response(const json& body) {
  return body.is_object() && body.contains("object") && body["object"] == "response";
}

json encode(const request& r) {
  json input = json::array();
  for (const message& m : r.messages)
    m.who == role::assistant ? encode_assistant(m, input) : encode_user(m, input);
  json body{{"model", r.model}, {"input", input}, {"store", false}};
  if (!r.system.empty()) body["instructions"] = r.system;
  if (!r.tools.empty()) {
    json tools = json::array();
    for (const tool_spec& t : r.tools) // strict mode would need every property required: kj's schemas are not
      tools.push_back({{"type", "function"},
                       {"name", t.name},
                       {"description", t.description},
                       {"parameters", t.input_schema},
                       {"strict", false}});
    body["tools"] = tools;
  }
  if (models::openai_reasoning(r.model) || r.effort) {
    json reasoning{{"summary", "auto"}}; // summaries of the reasoning, kept in the transcript
    if (r.effort) reasoning["effort"] = *r.effort;
    body["reasoning"] = reasoning;
    body["include"] = json::array({"reasoning.encrypted_content"}); // to send back next turn (store: false)
  }
  if (const auto limit = max_tokens_for("openai", r)) body["max_output_tokens"] = *limit;
  if (r.temperature) body["temperature"] = *r.temperature;
  return body;
}

reply decode(const json& body) {
  if (!is_response(body)) throw malformed_response("field 'object' is not \"response\"");
  const json& output = fields::array(body, "output");
  reply out;
  out.content.who = role::assistant;
  out.content.raw_provider = raw_tag;
  out.content.raw = output;
  bool calls = false, cut_call = false;
  for (const json& item : output) {
    const std::string type = fields::text(item, "type");
    if (type == "reasoning") {
      out.content.parts.push_back(reasoning_part(item));
    } else if (type == "message") {
      for (const json& c : fields::array(item, "content")) {
        const std::string kind = fields::text(c, "type");
        if (kind == "output_text") out.content.parts.push_back(part::make_text(fields::text(c, "text")));
        if (kind == "refusal") out.content.parts.push_back(part::make_text(fields::text(c, "refusal")));
      }
    } else if (type == "function_call") {
      calls = true;
      cut_call |= fields::text(item, "status") == "incomplete";
      const std::string arguments = fields::text(item, "arguments");
      json parsed = json::parse(arguments.empty() ? "{}" : arguments, nullptr, false);
      out.content.parts.push_back(part::make_tool_call(fields::text(item, "call_id"),
                                                       fields::text(item, "name"),
                                                       parsed.is_discarded() ? json(arguments) : parsed));
    } // other items (server tools) travel in `raw` only
  }
  out.stop = stop_of(body, calls, out.stop_raw);
  if (out.stop == stop_reason::max_tokens && cut_call)
    throw truncated_response("the output limit (max_output_tokens) cut a function call's arguments");
  if (fields::text(body, "status") == "failed") {
    const json* error = fields::find(body, "error");
    throw malformed_response("the response failed: " +
                             (error ? error->dump() : std::string("no error given")));
  }
  out.model = fields::text(body, "model");
  out.request_id = fields::text(body, "id");
  if (const json* u = fields::find(body, "usage")) {
    const json* in = fields::find(*u, "input_tokens_details");
    const json* o = fields::find(*u, "output_tokens_details");
    const std::int64_t cached = in ? fields::count(*in, "cached_tokens") : 0;
    // input_tokens includes the cached ones; output_tokens includes reasoning.
    out.tokens = {fields::count(*u, "input_tokens") - cached, cached, 0, fields::count(*u, "output_tokens"),
                  o ? fields::count(*o, "reasoning_tokens") : 0};
  }
  return out;
}

} // namespace kj::llm::responses
