// The LLM client over real HTTP against the fake provider: success and tool-call round trips for each wire
// format, then every failure the issue names (429, 529, 500, RESOURCE_EXHAUSTED, 401, spend limits, malformed
// and truncated bodies, a slow answer, no server) with the retry each deserves.
#include "llm_test_support.hpp"
#include "tests/support/catch_compat.hpp"

#include <thread>
#include <tuple>

using namespace kj;
using namespace kj::test;
using nlohmann::json;

namespace {

// Runs `complete` and returns the llm_error it throws (REQUIRE fails when it does not).
llm::llm_error failure_of(llm::client& c, const llm::request& r) {
  try {
    c.complete(r, {"test", 0});
  } catch (const llm::llm_error& e) {
    return e;
  }
  FAIL("the call succeeded");
  throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("each adapter sends its key in its own header and decodes the reply") {
  fake_llm_server server(llm_fixtures());
  for (const char* provider : {"anthropic", "gemini", "openai"}) {
    INFO(provider);
    const auto reply = client_for(server, provider)->complete(ask("success"), {"hello", 0});
    CHECK(reply.text().find("Hello") == 0);
    CHECK(reply.stop == llm::stop_reason::end_turn);
    CHECK(reply.attempts == 1);
    CHECK(reply.tokens.output > 0);
    CHECK(reply.latency_ms > 0);
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[0].headers.at("x-api-key") == "test-key-123");
  CHECK(requests[0].headers.at("anthropic-version") == "2023-06-01");
  CHECK(requests[1].headers.at("x-goog-api-key") == "test-key-123");
  CHECK(requests[1].path == "/v1beta/models/success:generateContent");
  CHECK(requests[2].headers.at("authorization") == "Bearer test-key-123");
  CHECK(requests[2].path == "/v1/chat/completions");
  for (const auto& r : requests)
    CHECK(r.body.find("test-key-123") == std::string::npos);
  // Request ids: Anthropic's and OpenAI's headers, Gemini's responseId.
  CHECK(client_for(server, "anthropic")->complete(ask("success"), {"", 0}).request_id ==
        "req_018EeWyXxfu5pfWkrYcMdjWG");
  CHECK(client_for(server, "openai")->complete(ask("success"), {"", 0}).request_id == "req_a1b2c3d4e5f6");
  CHECK(client_for(server, "gemini")->complete(ask("success"), {"", 0}).request_id ==
        "7pVZabcdEfGhIjKlMnOpQr");
}

TEST_CASE("a tool call goes round trip through every adapter, provider state sent back") {
  fake_llm_server server(llm_fixtures());
  const std::pair<const char*, const char*> cases[] = {
      {"anthropic", "tool_use"}, {"gemini", "function_call"}, {"openai", "tool_calls"}};
  for (const auto& [provider, scenario] : cases) {
    INFO(provider);
    auto c = client_for(server, provider);
    llm::request r = ask(scenario, "Read model_new.py.");
    r.tools.push_back(
        {"read_file",
         "Read a file of the workdir.",
         {{"type", "object"}, {"properties", {{"path", {{"type", "string"}}}}}, {"required", {"path"}}}});
    const auto first = c->complete(r, {"turn 1", 0});
    REQUIRE(first.stop == llm::stop_reason::tool_use);
    const auto calls = first.tool_calls();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].tool_name == "read_file");
    CHECK(calls[0].arguments["path"] == "model_new.py");
    r.messages.push_back(first.content);
    llm::message result;
    result.parts.push_back(
        llm::part::make_tool_result(calls[0].call_id, "read_file", "class ModelNew: pass"));
    r.messages.push_back(result);
    const auto second = c->complete(r, {"turn 2", 0});
    CHECK(second.text() == "The file defines ModelNew; nothing to change.");
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 6);
  // The second request of each pair carries the tool definition, the model's turn with its provider state
  // (Anthropic's thinking signature, Gemini's thoughtSignature) and the result.
  const json a = json::parse(requests[1].body), g = json::parse(requests[3].body),
             o = json::parse(requests[5].body);
  CHECK(a["tools"][0]["name"] == "read_file");
  CHECK(a["messages"][1]["content"][0]["signature"].get<std::string>().rfind("ErUB", 0) == 0);
  CHECK(a["messages"][2]["content"][0]["tool_use_id"] == "toolu_01A09q90qw90lq917835lq9");
  CHECK(g["tools"][0]["functionDeclarations"][0]["name"] == "read_file");
  CHECK(g["contents"][1]["parts"][0]["thoughtSignature"].get<std::string>().rfind("CtoB", 0) == 0);
  CHECK(g["contents"][2]["parts"][0]["functionResponse"]["response"]["output"] == "class ModelNew: pass");
  CHECK(o["tools"][0]["function"]["name"] == "read_file");
  CHECK(o["messages"][2]["tool_calls"][0]["id"] == "call_abc123");
  CHECK(o["messages"][3]["role"] == "tool");
}

TEST_CASE("429 with retry-after waits as long as asked, retry-after-ms first") {
  fake_llm_server server(llm_fixtures());
  auto c = client_for(server, "anthropic");
  const stopwatch seconds;
  const auto reply = c->complete(ask("rate_limited"), {"", 0});
  CHECK(reply.attempts == 2);
  CHECK(seconds.ms() >= 1000); // retry-after: 1
  const stopwatch millis;
  CHECK(c->complete(ask("rate_limited_ms"), {"", 0}).attempts == 2);
  CHECK(millis.ms() >= 150);   // retry-after-ms: 150 ...
  CHECK(millis.ms() < 10'000); // ... not retry-after: 30
}

TEST_CASE("529 overloaded and 500 are retried with backoff, until the retries run out") {
  fake_llm_server server(llm_fixtures());
  CHECK(client_for(server, "anthropic")->complete(ask("overloaded"), {"", 0}).attempts == 3);
  CHECK(client_for(server, "openai")->complete(ask("server_error"), {"", 0}).attempts == 3);
  CHECK(client_for(server, "gemini")->complete(ask("unavailable"), {"", 0}).attempts == 2);
  auto options = fast_options();
  options.retry.max_retries = 2;
  const auto e = failure_of(*client_for(server, "anthropic", options), ask("server_error"));
  CHECK(e.kind() == llm::error_kind::server);
  CHECK(e.attempts() == 3);
  CHECK(server.count("server_error") == 3 + 3); // openai's three, anthropic's three
  // The error names provider, status, the provider's message and the request id.
  CHECK(std::string(e.what()).rfind("anthropic: HTTP 500 api_error: Internal server error (request id "
                                    "req_01ServerError",
                                    0) == 0);
  CHECK(std::string(e.what()).find("gave up after 2 retries") != std::string::npos);
}

TEST_CASE("Gemini's RESOURCE_EXHAUSTED waits for RetryInfo's delay, and a daily quota is not waited for") {
  fake_llm_server server(llm_fixtures());
  const stopwatch watch;
  CHECK(client_for(server, "gemini")->complete(ask("resource_exhausted"), {"", 0}).attempts == 2);
  CHECK(watch.ms() >= 1000);
  const auto e = failure_of(*client_for(server, "gemini"), ask("quota_exhausted_day"));
  CHECK(e.kind() == llm::error_kind::rate_limit);
  CHECK(e.attempts() == 1);
  CHECK(std::string(e.what()).find("asks to retry in 36000 s") != std::string::npos);
}

TEST_CASE("auth errors and spend limits are not retried") {
  fake_llm_server server(llm_fixtures());
  const std::tuple<const char*, const char*, llm::error_kind> cases[] = {
      {"anthropic", "unauthorized", llm::error_kind::auth},
      {"gemini", "unauthorized", llm::error_kind::auth},
      {"openai", "unauthorized", llm::error_kind::auth},
      {"anthropic", "spend_limit", llm::error_kind::spend_limit},
      {"openai", "insufficient_quota", llm::error_kind::spend_limit},
      {"openai", "error_flat", llm::error_kind::invalid_request}};
  for (const auto& [provider, scenario, kind] : cases) {
    INFO(provider << " " << scenario);
    const auto e = failure_of(*client_for(server, provider), ask(scenario));
    CHECK(e.kind() == kind);
    CHECK(e.attempts() == 1);
  }
  CHECK(server.requests().size() == std::size(cases)); // one request each: nothing was retried
}

TEST_CASE("broken responses: malformed JSON, a truncated body, a slow answer, no server") {
  fake_llm_server server(llm_fixtures());
  auto options = fast_options();
  options.retry.max_retries = 1;
  const auto malformed = failure_of(*client_for(server, "anthropic", options), ask("malformed"));
  CHECK(malformed.kind() == llm::error_kind::malformed);
  CHECK(malformed.attempts() == 2); // retried: a proxy hiccup would heal
  CHECK(std::string(malformed.what()).find("HTTP 200 the response body is not valid JSON") !=
        std::string::npos);
  auto patient = options; // a 2xx answer is generated and billed: an unreadable one is asked again once only
  patient.retry.max_retries = 5;
  const auto billed = failure_of(*client_for(server, "anthropic", patient), ask("malformed"));
  CHECK(billed.attempts() == 2);
  CHECK(std::string(billed.what()).find("kj does not ask a third time") != std::string::npos);
  const auto shape = failure_of(*client_for(server, "openai", options), ask("malformed"));
  CHECK(std::string(shape.what()).find("field 'choices' is missing") != std::string::npos);
  const auto truncated = failure_of(*client_for(server, "gemini", options), ask("truncated"));
  CHECK(truncated.kind() == llm::error_kind::transport);
  CHECK(std::string(truncated.what()).find("cut off") != std::string::npos);

  options.request_timeout = std::chrono::milliseconds(400);
  const stopwatch watch;
  const auto slow = failure_of(*client_for(server, "anthropic", options), ask("slow"));
  CHECK(slow.kind() == llm::error_kind::timeout);
  CHECK(slow.attempts() == 1); // the request had reached the server, which may bill it: not sent again
  CHECK(std::string(slow.what()).find("not sent again") != std::string::npos);
  CHECK(watch.ms() < 2900); // gave up on time, not after the 3 s answer

  int closed_port = 0;
  {
    fake_llm_server gone(llm_fixtures());
    closed_port = gone.port();
  }
  llm::client nowhere(
      llm::make_provider("openai", "http://127.0.0.1:" + std::to_string(closed_port) + "/v1", ""), options,
      nullptr, nullptr);
  const auto refused = failure_of(nowhere, ask("success"));
  CHECK(refused.kind() == llm::error_kind::transport);
  CHECK(refused.attempts() == 2);
}

TEST_CASE("the concurrency limit holds calls back") {
  fake_llm_server server(llm_fixtures());
  const auto timed = [&](int limit) {
    auto options = fast_options();
    options.concurrency = limit;
    auto c = client_for(server, "anthropic", options);
    const stopwatch watch;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&, i] { c->complete(ask("slow_short"), {"", i}); });
    for (auto& t : threads)
      t.join();
    return watch.ms();
  };
  const double one_at_a_time = timed(1);
  CHECK(one_at_a_time >= 3 * 300); // three 300 ms answers in a row
  CHECK(timed(3) < one_at_a_time);
}
