// Implements the server-sent events parser and the helpers shared by the stream assemblers.
#include "adapters/llm/stream.hpp"

#include "adapters/llm/provider.hpp"

#include <fmt/core.h>
#include <string>

namespace kj::llm {

void sse_parser::feed(std::string_view bytes, const std::function<void(const sse_event&)>& on_event) {
  for (const char c : bytes) {
    if (m_after_cr && c == '\n') { // the LF of a CRLF pair: the line already ended
      m_after_cr = false;
      continue;
    }
    m_after_cr = c == '\r';
    if (c == '\r' || c == '\n') {
      line(m_pending, on_event);
      m_pending.clear();
    } else {
      m_pending += c;
    }
  }
}

void sse_parser::line(std::string_view text, const std::function<void(const sse_event&)>& on_event) {
  if (text.empty()) { // dispatch
    if (m_has_data) on_event(m_event);
    m_event = {};
    m_has_data = false;
    return;
  }
  if (text.front() == ':') return; // a comment (keep-alive)
  const std::size_t colon = text.find(':');
  const std::string_view field = text.substr(0, colon);
  std::string_view value = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  if (field == "event") {
    m_event.event = value;
  } else if (field == "data") {
    if (m_has_data) m_event.data += '\n';
    m_event.data += value;
    m_has_data = true;
  } // id, retry and unknown fields mean nothing to a one-shot call
}

nlohmann::json event_json(const sse_event& event) {
  nlohmann::json parsed = nlohmann::json::parse(event.data, nullptr, false);
  if (parsed.is_discarded())
    throw malformed_response(fmt::format("a streamed event{} whose data is not JSON: '{}'",
                                         event.event.empty() ? "" : " (" + event.event + ")",
                                         event.data.substr(0, 200)));
  return parsed;
}

error_kind stream_error_kind(const nlohmann::json& error) {
  const std::string type =
      error.value("type", nlohmann::json()).is_string() ? error["type"].get<std::string>() : "";
  if (type == "overloaded_error") return error_kind::overloaded;
  if (type == "rate_limit_error") return error_kind::rate_limit;
  if (type == "api_error") return error_kind::server;
  if (const auto code = error.find("code"); code != error.end() && code->is_number_integer())
    return kind_of_status(code->get<long>());
  if (type == "invalid_request_error") return error_kind::invalid_request;
  return error_kind::server; // an unnamed failure inside a stream: the server's
}

} // namespace kj::llm
