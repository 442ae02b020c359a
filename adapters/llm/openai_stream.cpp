// Assembles an OpenAI chat completions stream (platform.openai.com/docs/api-reference/chat-streaming):
// chat.completion.chunk events whose choices[0].delta carry role, content, reasoning (vLLM, SGLang) and
// tool_calls pieces keyed by index; finish_reason on the last choice chunk; with
// stream_options.include_usage a final chunk with empty choices and the usage; then `data: [DONE]`.
#include "adapters/llm/assemblers.hpp"
#include "adapters/llm/json_fields.hpp"

#include <cstdint>
#include <fmt/core.h>
#include <map>
#include <memory>
#include <string>

namespace kj::llm {
namespace {

using nlohmann::json;

class openai_assembler final : public stream_assembler {
public:
  void take(const sse_event& event) override {
    if (event.data == "[DONE]") {
      m_done = true;
      return;
    }
    const json chunk = event_json(event);
    if (fields::text(chunk, "object") == "error") // vLLM's flat error object
      throw stream_error(stream_error_kind(chunk),
                         fields::text(chunk, "type") + ": " + fields::text(chunk, "message"));
    if (const json* error = fields::find(chunk, "error")) {
      const std::string type = error->is_object() ? fields::text(*error, "type") : "";
      const std::string message = error->is_object() ? fields::text(*error, "message") : error->dump();
      throw stream_error(error->is_object() ? stream_error_kind(*error) : error_kind::server,
                         type.empty() ? message : type + ": " + message);
    }
    for (const char* key : {"id", "model", "created", "system_fingerprint", "usage"})
      if (const json* value = fields::find(chunk, key)) m_top[key] = *value;
    if (const json* choices = fields::find(chunk, "choices"); choices && choices->is_array())
      for (const json& choice : *choices)
        if (fields::count(choice, "index") == 0) take_choice(choice);
  }

  bool complete() const override { return m_done; }

  json body() const override {
    json message{{"role", "assistant"}, {"content", m_has_content ? json(m_content) : json()}};
    if (!m_reasoning.empty()) message[m_reasoning_key] = m_reasoning;
    json calls = json::array();
    for (const auto& [index, call] : m_calls)
      calls.push_back(call);
    if (!calls.empty()) message["tool_calls"] = calls;
    json out = m_top;
    out["object"] = "chat.completion";
    out["choices"] = json::array({{{"index", 0}, {"message", message}, {"finish_reason", m_finish}}});
    return out;
  }

private:
  void take_choice(const json& choice) {
    if (const std::string finish = fields::text(choice, "finish_reason"); !finish.empty()) m_finish = finish;
    const json* delta = fields::find(choice, "delta");
    if (!delta) return;
    if (const json* content = fields::find(*delta, "content")) {
      m_content += content->get<std::string>();
      m_has_content = true;
    }
    for (const char* key : {"reasoning_content", "reasoning"})
      if (const std::string piece = fields::text(*delta, key); !piece.empty()) {
        m_reasoning += piece;
        m_reasoning_key = key;
      }
    if (const json* calls = fields::find(*delta, "tool_calls"); calls && calls->is_array())
      for (const json& piece : *calls)
        take_call(piece);
  }

  // The first piece of a call carries id, type and name; later ones append to the arguments text.
  void take_call(const json& piece) {
    json& call = m_calls[fields::count(piece, "index")];
    if (call.is_null())
      call = {{"id", ""}, {"type", "function"}, {"function", {{"name", ""}, {"arguments", ""}}}};
    if (const std::string id = fields::text(piece, "id"); !id.empty()) call["id"] = id;
    if (const json* function = fields::find(piece, "function")) {
      // The name comes whole in the first piece; some servers repeat it in later ones.
      if (const std::string name = fields::text(*function, "name");
          !name.empty() && call["function"]["name"].get<std::string>().empty())
        call["function"]["name"] = name;
      call["function"]["arguments"] =
          call["function"]["arguments"].get<std::string>() + fields::text(*function, "arguments");
    }
  }

  json m_top = json::object();
  std::string m_content, m_reasoning, m_reasoning_key = "reasoning_content";
  bool m_has_content = false;
  json m_finish;
  std::map<std::int64_t, json> m_calls;
  bool m_done = false;
};

} // namespace

std::unique_ptr<stream_assembler> make_openai_assembler() {
  return std::make_unique<openai_assembler>();
}

} // namespace kj::llm
