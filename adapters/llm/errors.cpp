// Implements error kinds, retry-after parsing and the backoff rule.
#include "adapters/llm/errors.hpp"

#include <array>
#include <cmath>
#include <ctime>
#include <fmt/core.h>
#include <utility>

namespace kj::llm {
namespace {

constexpr std::array<std::pair<error_kind, const char*>, 16> kind_names{{
    {error_kind::auth, "auth"},
    {error_kind::spend_limit, "spend_limit"},
    {error_kind::invalid_request, "invalid_request"},
    {error_kind::not_found, "not_found"},
    {error_kind::too_large, "too_large"},
    {error_kind::conflict, "conflict"},
    {error_kind::rate_limit, "rate_limit"},
    {error_kind::overloaded, "overloaded"},
    {error_kind::server, "server"},
    {error_kind::timeout, "timeout"},
    {error_kind::transport, "transport"},
    {error_kind::malformed, "malformed"},
    {error_kind::truncated, "truncated"},
    {error_kind::not_recorded, "not_recorded"},
    {error_kind::cancelled, "cancelled"},
    {error_kind::config, "config"},
}};

// A non-negative decimal number of seconds ("2", "1.5"); none for anything else.
std::optional<double> parse_seconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

std::chrono::milliseconds from_seconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000.0)));
}

} // namespace

std::string to_string(error_kind kind) {
  for (const auto& [k, name] : kind_names)
    if (k == kind) return name;
  return "unknown";
}

std::optional<error_kind> parse_error_kind(const std::string& name) {
  for (const auto& [k, n] : kind_names)
    if (name == n) return k;
  return std::nullopt;
}

bool is_retryable(error_kind kind) {
  switch (kind) {
  case error_kind::conflict:
  case error_kind::rate_limit:
  case error_kind::overloaded:
  case error_kind::server:
  case error_kind::timeout:
  case error_kind::transport:
  case error_kind::malformed:
    return true;
  default:
    return false;
  }
}

bool stops_generation(error_kind kind) {
  // not_recorded: a replay that cannot answer one request is no longer the recorded run.
  return kind == error_kind::auth || kind == error_kind::spend_limit || kind == error_kind::not_found ||
         kind == error_kind::cancelled || kind == error_kind::config || kind == error_kind::not_recorded;
}

llm_error::llm_error(std::string provider, error_kind kind, const std::string& message, long status,
                     std::string request_id, int attempts)
    : std::runtime_error(message), m_provider(std::move(provider)), m_kind(kind), m_status(status),
      m_request_id(std::move(request_id)), m_attempts(attempts) {}

error_kind kind_of_status(long status) {
  if (status == 401 || status == 403) return error_kind::auth;
  if (status == 402) return error_kind::spend_limit;
  if (status == 404) return error_kind::not_found;
  if (status == 408) return error_kind::timeout;
  if (status == 409) return error_kind::conflict;
  if (status == 413) return error_kind::too_large;
  if (status == 429) return error_kind::rate_limit;
  if (status == 503 || status == 529) return error_kind::overloaded;
  if (status >= 500) return error_kind::server;
  return error_kind::invalid_request;
}

std::optional<std::chrono::milliseconds> retry_after_from_headers(const http_response& response) {
  if (const auto ms = parse_seconds(response.header("retry-after-ms")))
    return std::chrono::milliseconds(static_cast<long long>(std::ceil(*ms)));
  const std::string value = response.header("retry-after");
  if (const auto seconds = parse_seconds(value)) return from_seconds(*seconds);
  // An HTTP date (RFC 9110 IMF-fixdate): wait until then.
  std::tm tm{};
  if (!value.empty() && ::strptime(value.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm)) {
    const double seconds = std::difftime(::timegm(&tm), std::time(nullptr));
    return from_seconds(seconds > 0 ? seconds : 0);
  }
  return std::nullopt;
}

std::optional<std::chrono::milliseconds> parse_proto_duration(const std::string& text) {
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  const auto seconds = parse_seconds(text.substr(0, text.size() - 1));
  if (!seconds) return std::nullopt;
  return from_seconds(*seconds);
}

std::optional<std::chrono::milliseconds> next_delay(const retry_policy& policy, int retry, const failure& f,
                                                    std::mt19937_64& rng, std::string* why_not) {
  const auto refuse = [&](std::string why) -> std::optional<std::chrono::milliseconds> {
    if (why_not) *why_not = std::move(why);
    return std::nullopt;
  };
  if (f.should_retry == false) return refuse("the server says not to retry (x-should-retry: false)");
  if (f.unanswered_generation)
    return refuse("not sent again: the request had reached the provider, which may have generated (and "
                  "billed) the answer; raise --request-timeout, or stream the answer (--stream always)");
  if (!is_retryable(f.kind) && f.should_retry != true)
    return refuse(fmt::format("{} errors are not retried", to_string(f.kind)));
  if (retry > policy.max_retries) return refuse(fmt::format("gave up after {} retries", policy.max_retries));
  if (f.retry_after) {
    if (*f.retry_after > policy.max_wait)
      return refuse(fmt::format("the server asks to retry in {:.0f} s, longer than the {:.0f} s kj waits",
                                f.retry_after->count() / 1000.0, policy.max_wait.count() / 1000.0));
    return *f.retry_after;
  }
  const double exponential = static_cast<double>(policy.base_delay.count()) * std::pow(2.0, retry - 1);
  const double capped = std::min(exponential, static_cast<double>(policy.max_delay.count()));
  std::uniform_real_distribution<double> jitter(0.5, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(capped * jitter(rng)));
}

} // namespace kj::llm
