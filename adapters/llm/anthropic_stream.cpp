// Assembles an Anthropic Messages stream (platform.claude.com/docs/en/build-with-claude/streaming):
// message_start, then per content block a start, deltas (text, thinking, signature, input JSON) and a stop,
// message_delta (stop reason, cumulative usage), message_stop; ping and unknown events are ignored, an
// `error` event is the call's failure.
#include "adapters/llm/assemblers.hpp"
#include "adapters/llm/json_fields.hpp"

#include <cstdint>
#include <fmt/core.h>
#include <map>
#include <memory>
#include <set>
#include <string>

namespace kj::llm {
namespace {

using nlohmann::json;

class anthropic_assembler final : public stream_assembler {
public:
  void take(const sse_event& event) override {
    const json data = event_json(event);
    const std::string type = fields::text(data, "type");
    if (type == "message_start") {
      m_message = fields::object(data, "message");
      m_message["content"] = json::array();
    } else if (type == "content_block_start") {
      block(data) = fields::object(data, "content_block");
    } else if (type == "content_block_delta") {
      delta(data);
    } else if (type == "content_block_stop") {
      close(data);
    } else if (type == "message_delta") {
      if (m_message.is_null()) throw malformed_response("message_delta before message_start");
      for (const auto& [key, value] : fields::object(data, "delta").items())
        m_message[key] = value;
      if (const json* u = fields::find(data, "usage")) // cumulative counts: the latest wins
        for (const auto& [key, value] : u->items())
          if (!value.is_null()) m_message["usage"][key] = value;
    } else if (type == "message_stop") {
      m_done = true;
    } else if (type == "error") {
      const json& error = fields::object(data, "error");
      throw stream_error(stream_error_kind(error),
                         fmt::format("{}: {}", fields::text(error, "type"), fields::text(error, "message")));
    }
  }

  bool complete() const override { return m_done; }

  json body() const override {
    if (!m_cut.empty()) {
      const std::int64_t index = *m_cut.begin();
      const std::size_t bytes = m_partial_json.at(index).size();
      if (fields::text(m_message, "stop_reason") == "max_tokens")
        throw truncated_response(
            fmt::format("the answer reached max_tokens inside tool call {} ({} bytes of its "
                        "input, cut off): raise --max-tokens",
                        index, bytes));
      throw malformed_response(
          fmt::format("content block {}: its input_json_delta pieces are not JSON", index));
    }
    json out = m_message;
    for (const auto& [index, b] : m_blocks)
      out["content"].push_back(b);
    return out;
  }

private:
  json& block(const json& data) {
    if (m_message.is_null()) throw malformed_response("a content block before message_start");
    return m_blocks[fields::count(data, "index")];
  }

  void delta(const json& data) {
    json& b = block(data);
    const json& d = fields::object(data, "delta");
    const std::string kind = fields::text(d, "type");
    if (kind == "text_delta") {
      b["text"] = fields::text(b, "text") + fields::text(d, "text");
    } else if (kind == "thinking_delta") {
      b["thinking"] = fields::text(b, "thinking") + fields::text(d, "thinking");
    } else if (kind == "signature_delta") {
      b["signature"] = fields::text(b, "signature") + fields::text(d, "signature");
    } else if (kind == "input_json_delta") {
      m_partial_json[fields::count(data, "index")] += fields::text(d, "partial_json");
    } // citations_delta and future deltas: nothing kj reads
  }

  // A tool_use block's input arrives as pieces of one JSON text; an empty text is an empty object.
  void close(const json& data) {
    const std::int64_t index = fields::count(data, "index");
    json& b = block(data);
    const auto partial = m_partial_json.find(index);
    if (partial == m_partial_json.end()) return;
    json input = partial->second.empty() ? json::object() : json::parse(partial->second, nullptr, false);
    if (input.is_discarded()) { // cut at max_tokens (message_delta says so next), or broken
      m_cut.insert(index);
      return;
    }
    b["input"] = std::move(input);
  }

  json m_message;
  std::map<std::int64_t, json> m_blocks;
  std::map<std::int64_t, std::string> m_partial_json;
  std::set<std::int64_t> m_cut; // tool_use blocks whose input pieces are not JSON
  bool m_done = false;
};

} // namespace

std::unique_ptr<stream_assembler> make_anthropic_assembler() {
  return std::make_unique<anthropic_assembler>();
}

} // namespace kj::llm
