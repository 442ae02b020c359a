// The three wire formats without a network: requests as each provider documents them, the recorded replies
// decoded (usage into four buckets, thinking, tool calls), errors classified (spend limits, retry delays).
#include "adapters/llm/provider.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

using namespace kj;
using namespace kj::test;
using nlohmann::json;

namespace {

json step(const std::string& provider, const std::string& scenario, std::size_t index = 0) {
  return json::parse(read_file(fixtures_dir() / "llm" / provider / (scenario + ".json")))["steps"][index];
}

llm::http_response response_of(const json& s) {
  llm::http_response r;
  r.status = s.value("status", 200);
  if (s.contains("headers"))
    for (const auto& [name, value] : s["headers"].items())
      r.headers[name] = value.get<std::string>();
  r.body = s.contains("body_text") ? s["body_text"].get<std::string>() : s["body"].dump();
  return r;
}

llm::reply decode(const llm::provider& p, const std::string& scenario, std::size_t index = 0) {
  return p.decode(step(p.name(), scenario, index)["body"]);
}

llm::request hello_request() {
  llm::request r;
  r.model = "m";
  r.system = "be brief";
  r.messages.push_back(llm::message::user_text("hi"));
  return r;
}

} // namespace

TEST_CASE("each provider's usage fields map onto the four buckets") {
  const auto anthropic = llm::make_provider("anthropic", "http://x", "k");
  const auto gemini = llm::make_provider("gemini", "http://x", "k");
  const auto openai = llm::make_provider("openai", "http://x", "");
  const auto a = decode(*anthropic, "success").tokens; // input_tokens excludes the cache
  CHECK((a.input == 21 && a.cache_read == 3072 && a.cache_write == 1536 && a.output == 48));
  const auto g = decode(*gemini, "success").tokens; // promptTokenCount includes it; thinking is output
  CHECK((g.input == 250 && g.cache_read == 1000 && g.cache_write == 0 && g.output == 300));
  const auto o =
      decode(*openai, "success").tokens; // prompt_tokens includes cached; completion includes reasoning
  CHECK((o.input == 86 && o.cache_read == 1920 && o.cache_write == 0 && o.output == 300));
}

TEST_CASE("requests follow each provider's documented shape, with the key only in a header") {
  const auto r = hello_request();
  const auto a = llm::make_provider("anthropic", "http://h:1/", "sk-a")->encode(r);
  CHECK(a.url == "http://h:1/v1/messages");
  CHECK(a.body["max_tokens"] == 16384); // Anthropic requires one
  CHECK(a.body["system"][0]["cache_control"]["type"] == "ephemeral");
  CHECK(a.body["messages"][0]["content"][0]["cache_control"]["type"] == "ephemeral");
  CHECK_FALSE(a.body.contains("temperature")); // not sent unless asked for
  CHECK(a.body.dump().find("sk-a") == std::string::npos);
  const auto g = llm::make_provider("gemini", "http://h:1", "g-key")->encode(r);
  CHECK(g.url == "http://h:1/v1beta/models/m:generateContent");
  CHECK(g.body["systemInstruction"]["parts"][0]["text"] == "be brief");
  CHECK(g.body["contents"][0]["role"] == "user");
  auto with_options = r;
  with_options.max_tokens = 100;
  with_options.temperature = 0.5;
  const auto o = llm::make_provider("openai", "http://h:1/v1", "")->encode(with_options);
  CHECK(o.url == "http://h:1/v1/chat/completions");
  CHECK(o.body["messages"][0] == json{{"role", "system"}, {"content", "be brief"}});
  CHECK((o.body["max_tokens"] == 100 && o.body["temperature"] == 0.5));
  CHECK(llm::make_provider("openai", "", "")->auth_headers().empty()); // a local server needs no key
  CHECK(llm::make_provider("openai", "", "sk-o")->auth_headers() ==
        std::vector<std::string>{"authorization: Bearer sk-o"});
  CHECK_THROWS_AS(llm::make_provider("anthropic", "", ""), llm::llm_error); // the hosted APIs need one
}

TEST_CASE("anthropic: thinking blocks keep their signatures and go back verbatim with the tool result") {
  const auto p = llm::make_provider("anthropic", "http://x", "k");
  const auto thinking = decode(*p, "thinking");
  REQUIRE(thinking.content.parts.size() == 3);
  CHECK(thinking.content.parts[0].type == llm::part::kind::thinking);
  CHECK(thinking.content.parts[0].signature.rfind("EuYB", 0) == 0);
  CHECK(thinking.content.parts[1].redacted);
  CHECK(thinking.text() == "Done thinking.");

  const auto call = decode(*p, "tool_use");
  CHECK(call.stop == llm::stop_reason::tool_use);
  const auto calls = call.tool_calls();
  REQUIRE(calls.size() == 1);
  CHECK((calls[0].tool_name == "read_file" && calls[0].arguments["path"] == "model_new.py"));
  auto next = hello_request();
  next.messages.push_back(call.content);
  llm::message result;
  result.parts.push_back(llm::part::make_tool_result(calls[0].call_id, "read_file", "class ModelNew: ..."));
  next.messages.push_back(result);
  const json body = p->encode(next).body;
  // The assistant turn is sent back exactly as received (thinking signature included), then the result.
  CHECK(body["messages"][1]["content"] == step("anthropic", "tool_use")["body"]["content"]);
  CHECK(body["messages"][2]["content"][0]["type"] == "tool_result");
  CHECK(body["messages"][2]["content"][0]["tool_use_id"] == "toolu_01A09q90qw90lq917835lq9");
}

TEST_CASE("gemini: the thoughtSignature of a function call is sent back with the functionResponse") {
  const auto p = llm::make_provider("gemini", "http://x", "k");
  const auto call = decode(*p, "function_call");
  CHECK(call.stop == llm::stop_reason::tool_use); // Gemini says STOP; a function call means tool use
  const auto calls = call.tool_calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].signature.rfind("CtoB", 0) == 0);
  auto next = hello_request();
  next.messages.push_back(call.content);
  llm::message result;
  result.parts.push_back(llm::part::make_tool_result("", "read_file", "class ModelNew: ..."));
  next.messages.push_back(result);
  const json body = p->encode(next).body;
  CHECK(body["contents"][1] == step("gemini", "function_call")["body"]["candidates"][0]["content"]);
  CHECK(body["contents"][2]["parts"][0]["functionResponse"]["name"] == "read_file");
  // Rebuilt from the parts (another provider's turn), the signature still travels.
  auto rebuilt = call.content;
  rebuilt.raw_provider.clear();
  next.messages[1] = rebuilt;
  CHECK(p->encode(next).body["contents"][1]["parts"][0]["thoughtSignature"] == calls[0].signature);
  CHECK(decode(*p, "safety").stop == llm::stop_reason::refusal);
}

TEST_CASE("openai: tool_calls with JSON-string arguments, role tool results, reasoning_content") {
  const auto p = llm::make_provider("openai", "http://x", "");
  const auto call = decode(*p, "tool_calls");
  CHECK(call.stop == llm::stop_reason::tool_use);
  REQUIRE(call.tool_calls().size() == 1);
  CHECK(call.tool_calls()[0].arguments == json{{"path", "model_new.py"}});
  auto next = hello_request();
  next.messages.push_back(call.content);
  llm::message result;
  result.parts.push_back(llm::part::make_tool_result("call_abc123", "read_file", "class ModelNew: ..."));
  next.messages.push_back(result);
  const json messages = p->encode(next).body["messages"];
  REQUIRE(messages.size() == 4);
  CHECK(messages[2]["tool_calls"][0]["function"]["arguments"] == "{\"path\":\"model_new.py\"}");
  CHECK(messages[3] ==
        json{{"role", "tool"}, {"tool_call_id", "call_abc123"}, {"content", "class ModelNew: ..."}});
  const auto reasoning = decode(*p, "reasoning");
  CHECK(reasoning.content.parts[0].type == llm::part::kind::thinking);
  CHECK(reasoning.text() == "Done.");
  CHECK_THROWS_AS(decode(*p, "malformed"), llm::malformed_response);
}

TEST_CASE("errors: kinds, spend limits told from rate limits, retry delays, both OpenAI error shapes") {
  const auto a = llm::make_provider("anthropic", "http://x", "k");
  const auto g = llm::make_provider("gemini", "http://x", "k");
  const auto o = llm::make_provider("openai", "http://x", "");
  const auto failure = [](const llm::provider& p, const std::string& scenario) {
    return p.decode_failure(response_of(step(p.name(), scenario)));
  };
  const auto rate = failure(*a, "rate_limited");
  CHECK((rate.kind == llm::error_kind::rate_limit && rate.retry_after == std::chrono::milliseconds(1000)));
  CHECK(rate.request_id == "req_01RateLimited");
  CHECK(rate.message ==
        "rate_limit_error: This request would exceed the rate limit for your organization of 50 "
        "requests per minute.");
  CHECK(failure(*a, "rate_limited_ms").retry_after == std::chrono::milliseconds(150)); // -ms wins
  CHECK(failure(*a, "overloaded").kind == llm::error_kind::overloaded);
  CHECK(failure(*a, "spend_limit").kind == llm::error_kind::spend_limit);
  CHECK(failure(*a, "unauthorized").kind == llm::error_kind::auth);
  const auto exhausted = failure(*g, "resource_exhausted");
  CHECK((exhausted.kind == llm::error_kind::rate_limit &&
         exhausted.retry_after == std::chrono::milliseconds(1000)));
  CHECK(failure(*g, "quota_exhausted_day").retry_after == std::chrono::milliseconds(36'000'000));
  CHECK(failure(*g, "unauthorized").kind == llm::error_kind::auth); // a 400 that is about the key
  const auto flat = failure(*o, "error_flat");
  CHECK((flat.kind == llm::error_kind::invalid_request &&
         flat.message.rfind("BadRequestError: This model's maximum context length", 0) == 0));
  CHECK(failure(*o, "unauthorized").message == "invalid_request_error: Incorrect API key provided.");
  CHECK(failure(*o, "insufficient_quota").kind == llm::error_kind::spend_limit);
}

TEST_CASE("retry-after as an HTTP date, protobuf durations, and the backoff rule") {
  llm::http_response r;
  r.headers["retry-after"] = "Wed, 21 Oct 2015 07:28:00 GMT"; // in the past: retry now
  CHECK(llm::retry_after_from_headers(r) == std::chrono::milliseconds(0));
  CHECK(llm::parse_proto_duration("1.5s") == std::chrono::milliseconds(1500));
  CHECK_FALSE(llm::parse_proto_duration("15"));
  llm::retry_policy policy{.max_retries = 3,
                           .base_delay = std::chrono::milliseconds(100),
                           .max_delay = std::chrono::milliseconds(300),
                           .max_wait = std::chrono::milliseconds(5000)};
  std::mt19937_64 rng(1);
  std::string why;
  const llm::failure overloaded{llm::error_kind::overloaded, "", 529, "", {}};
  for (int retry = 1; retry <= 3; ++retry) {
    const auto d = llm::next_delay(policy, retry, overloaded, rng, &why);
    REQUIRE(d);
    const double cap = std::min(100.0 * (1 << (retry - 1)), 300.0);
    CHECK((d->count() >= cap / 2 && d->count() <= cap)); // jitter within [d/2, d], capped
  }
  CHECK_FALSE(llm::next_delay(policy, 4, overloaded, rng, &why));
  CHECK(why == "gave up after 3 retries");
  CHECK_FALSE(llm::next_delay(policy, 1, {llm::error_kind::auth, "", 401, "", {}}, rng, &why));
  CHECK_FALSE(llm::next_delay(
      policy, 1, {llm::error_kind::rate_limit, "", 429, "", std::chrono::milliseconds(9000)}, rng, &why));
  CHECK(why.find("longer than the 5 s kj waits") != std::string::npos);
}

TEST_CASE("URLs lose credentials and queries before they are stored, and keys are redacted from text") {
  CHECK(llm::strip_url("https://user:secret@host:8000/v1?key=abc#x") == "https://host:8000/v1");
  CHECK(llm::strip_url("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1");
  const auto p = llm::make_provider("anthropic", "", "sk-ant-SECRET");
  CHECK(p->redact("bad key sk-ant-SECRET, sk-ant-SECRET!") == "bad key [redacted], [redacted]!");
}
