// Pacing (issue 45 item 5): the reset formats of OpenAI's and Anthropic's rate-limit headers, and the pacer's
// waits for --rpm, --tpm and a limit the provider says is used up.
#include "adapters/llm/pacing.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj::llm;
using std::chrono::milliseconds;

TEST_CASE("rate-limit reset headers: OpenAI's durations and Anthropic's RFC 3339 times") {
  CHECK(parse_reset_duration("1s") == milliseconds(1000));
  CHECK(parse_reset_duration("6m0s") == milliseconds(360'000));
  CHECK(parse_reset_duration("20ms") == milliseconds(20));
  CHECK(parse_reset_duration("1.5s") == milliseconds(1500));
  CHECK(parse_reset_duration("2h3m4s") == milliseconds(7'384'000));
  for (const char* bad : {"", "soon", "1", "s1", "1s ", "-1s"})
    CHECK_FALSE(parse_reset_duration(bad));
  const auto utc = parse_rfc3339("2026-12-04T23:40:05Z");
  REQUIRE(utc);
  CHECK(std::chrono::system_clock::to_time_t(*utc) == 1796427605);
  CHECK(parse_rfc3339("2026-12-05T00:40:05+01:00") == utc);
  CHECK(parse_rfc3339("2026-12-04T23:40:05.250Z") == *utc + milliseconds(250));
  CHECK_FALSE(parse_rfc3339("yesterday"));
}

TEST_CASE("the pacer spaces requests by --rpm, keeps --tpm's minute and waits out a used-up limit") {
  const auto now = pacer::clock::now();
  pacer rpm({120.0, std::nullopt}); // one start every 500 ms
  CHECK(rpm.reserve(10, now) == milliseconds(0));
  CHECK(rpm.reserve(10, now) == milliseconds(500));
  CHECK(rpm.reserve(10, now) == milliseconds(1000));

  pacer tpm({std::nullopt, 1000.0});
  CHECK(tpm.reserve(600, now) == milliseconds(0));
  tpm.answered({}, 100, now);                                              // the answer used 700 in all
  CHECK(tpm.reserve(200, now + milliseconds(10)) == milliseconds(0));      // 900 fits
  CHECK(tpm.reserve(600, now + milliseconds(20)) >= milliseconds(59'000)); // 1500 > 1000: the next minute
  // Calls in flight count from their start (the default --concurrency 4 sends several at once).
  pacer parallel({std::nullopt, 1000.0});
  CHECK(parallel.reserve(600, now) == milliseconds(0));
  CHECK(parallel.reserve(600, now) >= milliseconds(59'000));
  CHECK(parallel.reserve(600, now) >= milliseconds(119'000));

  pacer headers;
  http_response told;
  told.status = 200;
  told.headers = {{"x-ratelimit-remaining-requests", "0"}, {"x-ratelimit-reset-requests", "2s"}};
  headers.answered(told, 0, now);
  CHECK(headers.reserve(0, now) == milliseconds(2000));
  http_response anthropic;
  anthropic.status = 429;
  const auto in_3s = std::chrono::system_clock::now() + std::chrono::seconds(3);
  const std::time_t t = std::chrono::system_clock::to_time_t(in_3s);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  anthropic.headers = {{"anthropic-ratelimit-tokens-remaining", "0"},
                       {"anthropic-ratelimit-tokens-reset", text}};
  pacer claude;
  claude.answered(anthropic, 0, now);
  const auto wait = claude.reserve(0, now);
  CHECK(wait > milliseconds(1500));
  CHECK(wait <= milliseconds(3100));
  http_response plenty;
  plenty.headers = {{"x-ratelimit-remaining-requests", "12"}, {"x-ratelimit-reset-requests", "1m0s"}};
  pacer calm;
  calm.answered(plenty, 0, now);
  CHECK(calm.reserve(0, now) == milliseconds(0));
}
