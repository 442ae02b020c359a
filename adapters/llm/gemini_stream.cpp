// Assembles a Gemini streamGenerateContent?alt=sse stream (ai.google.dev/api/generate-content): each event
// is a GenerateContentResponse holding the next parts of the candidate; the last carries finishReason and
// the final usageMetadata. Text parts are joined, but a part with a thoughtSignature is never merged with
// another (the thought-signatures documentation), so every signature goes back where it came.
#include "adapters/llm/assemblers.hpp"
#include "adapters/llm/json_fields.hpp"

#include <fmt/core.h>
#include <memory>
#include <string>

namespace kj::llm {
namespace {

using nlohmann::json;

// A plain text (or thought) part: only `text`, maybe `thought`, no signature.
bool plain_text(const json& part) {
  if (!part.is_object() || !part.contains("text") || part.contains("thoughtSignature")) return false;
  for (const auto& [key, value] : part.items())
    if (key != "text" && key != "thought") return false;
  return true;
}

class gemini_assembler final : public stream_assembler {
public:
  void take(const sse_event& event) override {
    const json chunk = event_json(event);
    if (const json* error = fields::find(chunk, "error"))
      throw stream_error(stream_error_kind(*error), fmt::format("{}: {}", fields::text(*error, "status"),
                                                                fields::text(*error, "message")));
    for (const char* key : {"usageMetadata", "modelVersion", "responseId", "promptFeedback"})
      if (const json* value = fields::find(chunk, key)) m_top[key] = *value;
    if (const json* feedback = fields::find(chunk, "promptFeedback");
        feedback && feedback->contains("blockReason"))
      m_done = true; // a blocked prompt: no candidate follows
    const json* candidates = fields::find(chunk, "candidates");
    if (!candidates || !candidates->is_array() || candidates->empty()) return;
    const json& candidate = (*candidates)[0];
    for (const auto& [key, value] : candidate.items())
      if (key != "content") m_candidate[key] = value; // finishReason, finishMessage, safetyRatings, ...
    if (const json* content = fields::find(candidate, "content"))
      if (const json* parts = fields::find(*content, "parts"); parts && parts->is_array())
        for (const json& part : *parts)
          add(part);
    m_done |= candidate.contains("finishReason") && !candidate["finishReason"].is_null();
  }

  bool complete() const override { return m_done; }

  json body() const override {
    json out = m_top;
    if (!m_candidate.is_null() || !m_parts.empty()) {
      json candidate = m_candidate.is_null() ? json::object() : m_candidate;
      if (!m_parts.empty()) candidate["content"] = {{"role", "model"}, {"parts", m_parts}};
      out["candidates"] = json::array({candidate});
    }
    return out;
  }

private:
  void add(const json& part) {
    if (plain_text(part) && !m_parts.empty() && plain_text(m_parts.back()) &&
        m_parts.back().value("thought", false) == part.value("thought", false)) {
      m_parts.back()["text"] = m_parts.back()["text"].get<std::string>() + fields::text(part, "text");
      return;
    }
    m_parts.push_back(part);
  }

  json m_top = json::object();
  json m_candidate;
  json m_parts = json::array();
  bool m_done = false;
};

} // namespace

std::unique_ptr<stream_assembler> make_gemini_assembler() {
  return std::make_unique<gemini_assembler>();
}

} // namespace kj::llm
