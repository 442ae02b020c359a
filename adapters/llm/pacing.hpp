// Pacing: requests spaced so that a provider's rate limits are met before they are hit. Two sources: the
// user's --rpm/--tpm (requests and tokens per minute), and the limits the provider reports on each answer
// (OpenAI's x-ratelimit-remaining-*/reset-*, Anthropic's anthropic-ratelimit-*-remaining/reset): when one
// says nothing is left, the next request waits for its reset. A 429's retry-after is the retry policy's.
#pragma once

#include "adapters/llm/http.hpp"

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace kj::llm {

struct pacing_options {
  std::optional<double> requests_per_minute; // --rpm
  std::optional<double> tokens_per_minute;   // --tpm: prompt and output tokens of the last minute
};

// "1s", "6m0s", "20ms", "1.5s", "2h3m4s" (OpenAI's reset headers); none when it is not such a duration.
std::optional<std::chrono::milliseconds> parse_reset_duration(const std::string& text);
// An RFC 3339 time ("2026-12-04T23:40:05Z", fractions and offsets allowed; Anthropic's reset headers).
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text);

class pacer {
public:
  using clock = std::chrono::steady_clock;
  explicit pacer(pacing_options options = {}) : m_options(options) {}

  // Reserves the next start for a request of about `tokens` tokens and returns how long to wait for it.
  // Safe to call from several threads: each caller gets its own start.
  std::chrono::milliseconds reserve(std::int64_t tokens, clock::time_point now = clock::now());
  // An answer came (any status): its rate-limit headers, and the tokens it used beyond what its reserve()
  // counted (negative when fewer).
  void answered(const http_response& response, std::int64_t tokens, clock::time_point now = clock::now());

private:
  std::mutex m_lock;
  pacing_options m_options;
  clock::time_point m_next_start{};                              // --rpm
  std::deque<std::pair<clock::time_point, std::int64_t>> m_used; // --tpm: the last minute's tokens
  clock::time_point m_blocked_until{};                           // the provider said none is left
  std::string m_blocked_by;
};

} // namespace kj::llm
