// A blocking HTTP request (POST, or GET, or a multipart/form-data POST of a file) over libcurl with connect,
// idle and whole-request timeouts and TCP keep-alive, whose 2xx body can be handed over as it arrives
// (server-sent events): what the LLM clients send with.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kj::llm {

// One part of a multipart/form-data body (a file upload: OpenAI's batch input).
struct form_part {
  std::string name;
  std::string data;
  std::string file_name;    // "" a plain field
  std::string content_type; // "" the default
};

struct http_request {
  std::string method = "POST"; // POST (body, or `form` when it has parts) or GET
  std::string url;
  std::vector<std::string> headers; // "Name: value"; may hold a key, so never logged or stored
  std::string body;
  std::vector<form_part> form; // POST as multipart/form-data instead of `body`
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{600'000}; // the whole exchange, body included
  // No byte for this long aborts the transfer as timed out (0: no limit). A stream stays alive on the
  // provider's own pings; TCP keep-alive keeps idle connections from being dropped by middleboxes.
  std::chrono::milliseconds idle_timeout{0};
  std::function<bool()> cancelled; // polled while waiting; true aborts the transfer
  // When set, a 2xx body of type text/event-stream goes here piece by piece instead of into `body`;
  // returning false aborts the transfer (the receiver keeps its own reason).
  std::function<bool(std::string_view)> on_stream;
};

struct http_response {
  long status = 0;                            // 0 when no response arrived
  std::map<std::string, std::string> headers; // lower-case names; the last value of a repeated header
  std::string body;                           // the whole body, unless it was streamed to on_stream
  bool streamed = false;                      // the body went to on_stream
  // Why no complete response arrived ("" when one did): connection refused, timed out, body cut off, ...
  std::string transport_error;
  bool timed_out = false;
  bool truncated = false;      // the connection closed before the body announced by Content-Length arrived
  bool aborted = false;        // `cancelled` returned true
  bool stream_stopped = false; // on_stream returned false
  bool request_sent = false;   // the whole request body reached the server (it may be generating an answer)
  double elapsed_ms = 0;

  std::string header(const std::string& lower_name) const; // "" when absent
};

// Sends `request` (its method: a POST of its body or form, or a GET) and waits for the whole response. Never
// throws for network trouble: it is reported in `transport_error`. Safe to call from several threads at once
// (one curl handle per call).
http_response http_post(const http_request& request);

} // namespace kj::llm
