// Why an LLM call failed, whether to try again, how long the server asked us to wait, and the error that
// names provider, status and request id.
#pragma once

#include "adapters/llm/http.hpp"

#include <chrono>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

namespace kj::llm {

enum class error_kind {
  auth,            // 401/403, a bad or missing key: every call would fail
  spend_limit,     // a spend cap or exhausted credit: waiting does not help
  invalid_request, // 400/422: this request is wrong (too long a prompt, a bad parameter)
  not_found,       // 404: usually the model name
  too_large,       // 413
  conflict,        // 409
  rate_limit,      // 429 (Gemini: RESOURCE_EXHAUSTED)
  overloaded,      // 529 (Anthropic), 503
  server,          // other 5xx
  timeout,         // 408, or no complete response within the time limits
  transport,       // no response: connection refused, reset, DNS, TLS, a body cut off
  malformed,       // a 2xx whose body is not the JSON the provider documents
  truncated,    // a 2xx cut at max_tokens inside a tool call: billed, and the same request would be cut again
  not_recorded, // replay: the recording has no answer to this request
  cancelled,    // Ctrl-C while waiting
  config,       // a missing key or a bad option, found before anything was sent
};
std::string to_string(error_kind kind);
std::optional<error_kind> parse_error_kind(const std::string& name);

bool is_retryable(error_kind kind);
// Kinds after which no further call of the run can succeed: the run stops instead of failing every sample.
bool stops_generation(error_kind kind);

class llm_error : public std::runtime_error {
public:
  llm_error(std::string provider, error_kind kind, const std::string& message, long status = 0,
            std::string request_id = "", int attempts = 0);
  const std::string& provider() const { return m_provider; }
  error_kind kind() const { return m_kind; }
  long status() const { return m_status; }
  const std::string& request_id() const { return m_request_id; }
  int attempts() const { return m_attempts; }

private:
  std::string m_provider;
  error_kind m_kind;
  long m_status;
  std::string m_request_id;
  int m_attempts;
};

// What went wrong with one attempt, as the provider's response (or its absence) tells it.
struct failure {
  error_kind kind = error_kind::server;
  std::string message; // the provider's own words, e.g. "overloaded_error: Overloaded"
  long status = 0;
  std::string request_id;
  std::optional<std::chrono::milliseconds> retry_after; // what the server asked for, if it did
  std::optional<bool> should_retry; // the server's `x-should-retry: true|false`, obeyed over the kind
  // Our own time limit cut an attempt whose request had reached the server: it may have generated (and
  // billed) the answer, so it is not sent again.
  bool unanswered_generation = false;
};

// The default kind of an HTTP error status; providers refine it (spend limits hide behind 400 and 429).
error_kind kind_of_status(long status);

// `retry-after-ms` (milliseconds), else `retry-after` (seconds, or an HTTP date).
std::optional<std::chrono::milliseconds> retry_after_from_headers(const http_response& response);
// A google.protobuf.Duration in JSON form ("37s", "1.500s"), as in Gemini's RetryInfo.retryDelay.
std::optional<std::chrono::milliseconds> parse_proto_duration(const std::string& text);

struct retry_policy {
  int max_retries = 6;                         // attempts = 1 + max_retries
  std::chrono::milliseconds base_delay{1000};  // first backoff; doubles each retry
  std::chrono::milliseconds max_delay{60'000}; // cap of the exponential backoff
  std::chrono::milliseconds max_wait{300'000}; // the longest server-requested wait honoured
};

// The wait before retry number `retry` (1 for the first) after `f`, or none with the reason in `why_not`:
// the kind is not retried (or the server said `x-should-retry: false`), the retries are spent, a timed-out
// generation may already be billed, or the server asks for longer than max_wait. A server's own delay is
// honoured as given; otherwise exponential backoff with jitter in [d/2, d].
std::optional<std::chrono::milliseconds> next_delay(const retry_policy& policy, int retry, const failure& f,
                                                    std::mt19937_64& rng, std::string* why_not);

} // namespace kj::llm
