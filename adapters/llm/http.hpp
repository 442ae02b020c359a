// A blocking HTTP POST over libcurl with connect and whole-request timeouts: what the LLM clients send with.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kj::llm {

struct http_request {
  std::string url;
  std::vector<std::string> headers; // "Name: value"; may hold a key, so never logged or stored
  std::string body;
  std::chrono::milliseconds connect_timeout{10'000};
  std::chrono::milliseconds total_timeout{600'000}; // the whole exchange, body included
  std::function<bool()> cancelled;                  // polled while waiting; true aborts the transfer
};

struct http_response {
  long status = 0;                            // 0 when no response arrived
  std::map<std::string, std::string> headers; // lower-case names; the last value of a repeated header
  std::string body;
  // Why no complete response arrived ("" when one did): connection refused, timed out, body cut off, ...
  std::string transport_error;
  bool timed_out = false;
  bool truncated = false; // the connection closed before the body announced by Content-Length arrived
  bool aborted = false;   // `cancelled` returned true
  double elapsed_ms = 0;

  std::string header(const std::string& lower_name) const; // "" when absent
};

// Sends `request` as a POST and waits for the whole response. Never throws for network trouble: it is
// reported in `transport_error`. Safe to call from several threads at once (one curl handle per call).
http_response http_post(const http_request& request);

} // namespace kj::llm
