// Implements the pacer and the reset-header formats (platform.openai.com/docs/guides/rate-limits: "Rate
// limits in headers"; platform.claude.com/docs/en/api/rate-limits: "Response headers").
#include "adapters/llm/pacing.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <regex>

namespace kj::llm {
namespace {

using std::chrono::milliseconds;

std::optional<long long> whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoll(text);
}

} // namespace

std::optional<milliseconds> parse_reset_duration(const std::string& text) {
  static const std::regex part(R"((\d+(?:\.\d+)?)(ms|h|m|s))");
  if (text.empty()) return std::nullopt;
  double ms = 0;
  std::size_t consumed = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), part); it != std::sregex_iterator(); ++it) {
    if (static_cast<std::size_t>(it->position()) != consumed) return std::nullopt;
    consumed += it->length();
    const double value = std::stod((*it)[1]);
    const std::string unit = (*it)[2];
    ms += value * (unit == "h" ? 3'600'000 : unit == "m" ? 60'000 : unit == "s" ? 1000 : 1);
  }
  if (consumed != text.size()) return std::nullopt;
  return milliseconds(static_cast<long long>(std::ceil(ms)));
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text) {
  static const std::regex form(
      R"((\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|z|([+-])(\d{2}):(\d{2})))");
  std::smatch m;
  if (!std::regex_match(text, m, form)) return std::nullopt;
  std::tm t{};
  t.tm_year = std::stoi(m[1]) - 1900;
  t.tm_mon = std::stoi(m[2]) - 1;
  t.tm_mday = std::stoi(m[3]);
  t.tm_hour = std::stoi(m[4]);
  t.tm_min = std::stoi(m[5]);
  t.tm_sec = std::stoi(m[6]);
  auto at = std::chrono::system_clock::from_time_t(::timegm(&t));
  if (m[7].matched) at += milliseconds(static_cast<long long>(std::stod("0" + m[7].str()) * 1000));
  if (m[9].matched) { // an offset east of UTC is a time earlier in UTC
    const auto offset = std::chrono::hours(std::stoi(m[10])) + std::chrono::minutes(std::stoi(m[11]));
    at += m[9] == "+" ? -offset : offset;
  }
  return at;
}

milliseconds pacer::reserve(std::int64_t tokens, clock::time_point now) {
  std::lock_guard<std::mutex> guard(m_lock);
  clock::time_point start = std::max(now, m_blocked_until);
  if (m_options.requests_per_minute && *m_options.requests_per_minute > 0) {
    start = std::max(start, m_next_start);
    m_next_start = start + milliseconds(static_cast<long long>(60'000 / *m_options.requests_per_minute));
  }
  if (m_options.tokens_per_minute && *m_options.tokens_per_minute > 0) {
    while (!m_used.empty() && m_used.front().first + std::chrono::minutes(1) <= start)
      m_used.pop_front();
    std::int64_t sum = tokens;
    for (const auto& [at, used] : m_used)
      sum += used;
    // Wait for the oldest tokens to leave the minute until this request fits (alone, it always may go).
    // The request counts from its start, calls in flight included; answered() corrects it to what it used.
    for (auto it = m_used.begin(); sum > *m_options.tokens_per_minute && it != m_used.end(); ++it) {
      start = std::max(start, it->first + std::chrono::minutes(1));
      sum -= it->second;
    }
  }
  if (m_options.tokens_per_minute && *m_options.tokens_per_minute > 0) m_used.emplace_back(start, tokens);
  return std::chrono::duration_cast<milliseconds>(start - now);
}

void pacer::answered(const http_response& response, std::int64_t tokens, clock::time_point now) {
  std::lock_guard<std::mutex> guard(m_lock);
  if (m_options.tokens_per_minute && tokens != 0) m_used.emplace_back(now, tokens);
  const auto wall_now = std::chrono::system_clock::now();
  // (remaining, reset) header pairs: OpenAI's resets are durations, Anthropic's RFC 3339 times.
  static const std::pair<const char*, const char*> limits[] = {
      {"x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"},
      {"x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"},
      {"anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset"},
      {"anthropic-ratelimit-tokens-remaining", "anthropic-ratelimit-tokens-reset"},
      {"anthropic-ratelimit-input-tokens-remaining", "anthropic-ratelimit-input-tokens-reset"},
      {"anthropic-ratelimit-output-tokens-remaining", "anthropic-ratelimit-output-tokens-reset"}};
  for (const auto& [remaining_name, reset_name] : limits) {
    const auto remaining = whole_number(response.header(remaining_name));
    if (!remaining || *remaining > 0) continue;
    const std::string reset = response.header(reset_name);
    std::optional<clock::time_point> until;
    if (const auto d = parse_reset_duration(reset)) until = now + *d;
    if (const auto t = parse_rfc3339(reset))
      until = now + std::chrono::duration_cast<clock::duration>(*t - wall_now);
    if (until && *until > m_blocked_until) {
      m_blocked_until =
          std::min(*until, now + std::chrono::minutes(10)); // a reset past 10 min is not waited on
      m_blocked_by = remaining_name;
    }
  }
}

} // namespace kj::llm
