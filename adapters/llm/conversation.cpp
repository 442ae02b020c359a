// Helpers of the provider-neutral conversation types.
#include "adapters/llm/conversation.hpp"

namespace kj::llm {

part part::make_text(std::string text) {
  part p;
  p.text = std::move(text);
  return p;
}

part part::make_tool_call(std::string id, std::string name, nlohmann::json arguments) {
  part p;
  p.type = kind::tool_call;
  p.call_id = std::move(id);
  p.tool_name = std::move(name);
  p.arguments = std::move(arguments);
  return p;
}

part part::make_tool_result(std::string call_id, std::string name, std::string content, bool is_error) {
  part p;
  p.type = kind::tool_result;
  p.call_id = std::move(call_id);
  p.tool_name = std::move(name);
  p.text = std::move(content);
  p.is_error = is_error;
  return p;
}

message message::user_text(std::string text) {
  message m;
  m.parts.push_back(part::make_text(std::move(text)));
  return m;
}

usage& usage::operator+=(const usage& other) {
  input += other.input;
  cache_read += other.cache_read;
  cache_write += other.cache_write;
  output += other.output;
  reasoning += other.reasoning;
  return *this;
}

std::string to_string(stop_reason reason) {
  switch (reason) {
  case stop_reason::end_turn:
    return "end_turn";
  case stop_reason::max_tokens:
    return "max_tokens";
  case stop_reason::tool_use:
    return "tool_use";
  case stop_reason::stop_sequence:
    return "stop_sequence";
  case stop_reason::refusal:
    return "refusal";
  case stop_reason::context_exceeded:
    return "context_exceeded";
  case stop_reason::tool_call_error:
    return "tool_call_error";
  case stop_reason::other:
    break;
  }
  return "other";
}

std::string message::text() const {
  std::string out;
  for (const part& p : parts)
    if (p.type == part::kind::text) out += p.text;
  return out;
}

std::string reply::text() const {
  return content.text();
}

std::vector<part> reply::tool_calls() const {
  std::vector<part> out;
  for (const part& p : content.parts)
    if (p.type == part::kind::tool_call) out.push_back(p);
  return out;
}

} // namespace kj::llm
