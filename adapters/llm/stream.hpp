// Streamed answers: a parser of server-sent events, and the per-provider assembler that turns a stream's
// events back into the body the same call returns without streaming (so that both are decoded, priced and
// recorded by one path).
#pragma once

#include "adapters/llm/errors.hpp"

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kj::llm {

struct sse_event {
  std::string event; // the `event:` field; "" when the stream names none (Gemini, OpenAI)
  std::string data;  // the `data:` lines joined by '\n'
};

// Splits bytes into events as they arrive (WHATWG server-sent events: `field: value` lines, an empty line
// ends an event, `:` starts a comment; LF, CRLF or CR line ends).
class sse_parser {
public:
  void feed(std::string_view bytes, const std::function<void(const sse_event&)>& on_event);

private:
  void line(std::string_view text, const std::function<void(const sse_event&)>& on_event);
  std::string m_pending; // an unfinished line
  bool m_after_cr = false;
  sse_event m_event;
  bool m_has_data = false;
};

// An error the provider reported inside a 2xx stream (Anthropic's `event: error`, an `{"error": ...}` chunk).
class stream_error : public std::runtime_error {
public:
  stream_error(error_kind kind, const std::string& message) : std::runtime_error(message), m_kind(kind) {}
  error_kind kind() const { return m_kind; }

private:
  error_kind m_kind;
};

class stream_assembler {
public:
  virtual ~stream_assembler() = default;
  // Takes one event. Throws stream_error for an error event and malformed_response for one that does not
  // have the documented shape.
  virtual void take(const sse_event& event) = 0;
  // Whether the stream's final event arrived (a stream cut short is a transport failure, not an answer).
  virtual bool complete() const = 0;
  // The response body the non-streaming call would have returned.
  virtual nlohmann::json body() const = 0;
};

// Parses an event's data as JSON; throws malformed_response naming the event when it is not.
nlohmann::json event_json(const sse_event& event);
// The kind of an error object of a stream: its `type` (Anthropic) or numeric `code` (Gemini, OpenAI).
error_kind stream_error_kind(const nlohmann::json& error);

} // namespace kj::llm
