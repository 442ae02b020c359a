// The providers' documented responses, errors and streams (tests/fixtures/llm/<provider>/doc_*.json) replayed
// over HTTP by the fake provider in documentation mode, decoded by kj as each fixture's "expect" says; a
// streamed answer assembled and recorded exactly as the same answer sent whole; and the request fields of
// issue 24 (effort, streams, timeouts that are not sent again).
#include "adapters/llm/client.hpp"
#include "conformance_support.hpp"
#include "tests/fake_llm/fake_llm_server.hpp"

#include <algorithm>
#include <filesystem>
#include <map>

using namespace kj;
using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Keeps every exchange the client records, to compare what a stream and a plain answer leave behind.
class memory_log final : public llm::exchange_log {
public:
  std::optional<db::llm_exchange_record> find(const std::string&, int) override { return std::nullopt; }
  std::int64_t record(db::llm_exchange_record exchange) override {
    records.push_back(std::move(exchange));
    return static_cast<std::int64_t>(records.size());
  }
  std::vector<db::llm_exchange_record> records;
};

llm::client_options options(llm::stream_mode stream, int retries = 0) {
  llm::client_options o;
  o.retry.base_delay = std::chrono::milliseconds(10);
  o.retry.max_delay = std::chrono::milliseconds(50);
  o.retry.max_retries = retries;
  o.request_timeout = std::chrono::milliseconds(5000);
  o.stream = stream;
  return o;
}

// The fixture folders: one per wire format; OpenAI's Responses API is the openai adapter's other family.
const char* const k_families[] = {"anthropic", "gemini", "openai", "openai-responses"};

std::string adapter_of(const std::string& family) {
  return family == "openai-responses" ? "openai" : family;
}

// A request of the fixture folder's family: Responses asked for by --openai-api, as a scenario's model
// name is in no table.
llm::request request_of(const std::string& family, const std::string& scenario) {
  auto r = conversation(scenario);
  if (family == "openai-responses") r.api = "responses";
  return r;
}

llm::client client_of(const fake_llm_server& server, const std::string& provider, llm::client_options o,
                      llm::exchange_log* log = nullptr) {
  return llm::client(llm::make_provider(adapter_of(provider), server.base_url(provider), "test-key-123"),
                     std::move(o), log, nullptr);
}

std::vector<std::string> documented_scenarios(const std::string& provider) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(llm_fixtures() / provider))
    if (entry.path().filename().string().rfind("doc_", 0) == 0) names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

void check_reply(const llm::reply& reply, const json& expect) {
  if (expect.contains("stop")) CHECK(llm::to_string(reply.stop) == expect["stop"].get<std::string>());
  if (expect.contains("text")) CHECK(reply.text() == expect["text"].get<std::string>());
  if (expect.contains("empty")) CHECK(reply.empty() == expect["empty"].get<bool>());
  if (expect.contains("tokens")) {
    const json& t = expect["tokens"];
    CHECK(reply.tokens.input == t["input"]);
    CHECK(reply.tokens.cache_read == t["cache_read"]);
    CHECK(reply.tokens.cache_write == t["cache_write"]);
    CHECK(reply.tokens.output == t["output"]);
    CHECK(reply.tokens.reasoning == t["reasoning"]);
  }
  std::size_t thinking = 0;
  std::string signatures;
  for (const auto& p : reply.content.parts) {
    thinking += p.type == llm::part::kind::thinking ? 1 : 0;
    signatures += p.signature + " ";
  }
  if (expect.contains("thinking_parts")) CHECK(thinking == expect["thinking_parts"].get<std::size_t>());
  if (expect.contains("signature"))
    CHECK(signatures.find(expect["signature"].get<std::string>()) != std::string::npos);
  if (expect.contains("tool_calls")) {
    const auto calls = reply.tool_calls();
    REQUIRE(calls.size() == expect["tool_calls"].size());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      CHECK(calls[i].tool_name == expect["tool_calls"][i]["name"]);
      CHECK(calls[i].arguments == expect["tool_calls"][i]["arguments"]);
      if (expect["tool_calls"][i].contains("id")) CHECK(calls[i].call_id == expect["tool_calls"][i]["id"]);
    }
  }
}

} // namespace

TEST_CASE("every documented response, error and stream decodes as its fixture expects") {
  fake_llm_server server(llm_fixtures());
  int checked = 0;
  for (const char* provider : k_families)
    for (const std::string& scenario : documented_scenarios(provider)) {
      const json doc = fixture(provider, scenario);
      REQUIRE_FALSE(doc.value("source", "").empty()); // every fixture names where it comes from
      const bool stream = doc["steps"][0].contains("events");
      for (std::size_t i = 0; i < doc["steps"].size(); ++i) {
        INFO(provider << " " << scenario << " step " << i);
        const json expect = doc["steps"][i]["expect"];
        const int retries = expect.contains("attempts") ? 3 : 0;
        auto c = client_of(server, provider,
                           options(stream ? llm::stream_mode::always : llm::stream_mode::never, retries));
        auto r = request_of(provider, scenario);
        r.max_tokens = 1024;
        ++checked;
        if (!expect.contains("error_kind")) {
          check_reply(c.complete(r, {"doc", 0}), expect);
          continue;
        }
        try {
          c.complete(r, {"doc", 0});
          FAIL("the call succeeded");
        } catch (const llm::llm_error& e) {
          INFO(e.what());
          CHECK(llm::to_string(e.kind()) == expect["error_kind"].get<std::string>());
          if (expect.contains("attempts")) CHECK(e.attempts() == expect["attempts"].get<int>());
        }
      }
    }
  CHECK(checked >= 40);
  CHECK(server.violations().empty());
}

TEST_CASE("a streamed answer is decoded and recorded exactly as the same answer sent whole") {
  fake_llm_server server(llm_fixtures());
  for (const char* provider : k_families)
    for (const std::string& scenario : documented_scenarios(provider)) {
      const json step = fixture(provider, scenario)["steps"][0];
      if (step.contains("events") || step.value("status", 200) != 200 || step["expect"].contains("error_kind"))
        continue;
      INFO(provider << " " << scenario);
      memory_log plain_log, stream_log;
      auto r = request_of(provider, scenario);
      r.max_tokens = 1024;
      // A fresh server per pair, so that both get the scenario's first step.
      fake_llm_server pair(llm_fixtures());
      const llm::reply plain =
          client_of(pair, provider, options(llm::stream_mode::never), &plain_log).complete(r, {"", 0});
      fake_llm_server pair2(llm_fixtures());
      const llm::reply streamed =
          client_of(pair2, provider, options(llm::stream_mode::always), &stream_log).complete(r, {"", 0});
      REQUIRE(pair2.requests().at(0).streamed);
      CHECK(streamed.text() == plain.text());
      CHECK(streamed.stop == plain.stop);
      CHECK(streamed.stop_raw == plain.stop_raw);
      CHECK(streamed.content.parts.size() == plain.content.parts.size());
      for (std::size_t i = 0; i < std::min(plain.content.parts.size(), streamed.content.parts.size()); ++i) {
        CHECK(streamed.content.parts[i].text == plain.content.parts[i].text);
        CHECK(streamed.content.parts[i].signature == plain.content.parts[i].signature);
        CHECK(streamed.content.parts[i].arguments == plain.content.parts[i].arguments);
      }
      CHECK(streamed.tokens.prompt() == plain.tokens.prompt());
      CHECK((streamed.tokens.output == plain.tokens.output &&
             streamed.tokens.reasoning == plain.tokens.reasoning));
      if (std::string(provider) != "openai")
        CHECK(streamed.content.raw == plain.content.raw); // sent back verbatim
      REQUIRE((plain_log.records.size() == 1 && stream_log.records.size() == 1));
      const auto& a = plain_log.records[0];
      const auto& b = stream_log.records[0];
      CHECK(a.request_hash == b.request_hash); // one recording answers both
      CHECK((a.input_tokens == b.input_tokens && a.cache_read_tokens == b.cache_read_tokens &&
             a.cache_write_tokens == b.cache_write_tokens && a.output_tokens == b.output_tokens));
      CHECK(a.stop_reason == b.stop_reason);
      if (std::string(provider) != "openai")
        CHECK(json::parse(a.response_body) == json::parse(b.response_body));
      CHECK(pair.violations().empty());
      CHECK(pair2.violations().empty());
    }
}

TEST_CASE("effort levels go where each provider documents them, and unknown ones are refused") {
  auto claude = conversation("claude-opus-4-7");
  claude.effort = "high";
  const auto a = llm::make_provider("anthropic", "http://x", "k");
  REQUIRE_DOCUMENTED(*a, claude);
  CHECK(a->encode(claude).body["thinking"] == json{{"type", "adaptive"}, {"display", "summarized"}});
  CHECK(a->encode(claude).body["output_config"] == json{{"effort", "high"}});
  auto opus45 = conversation("claude-opus-4-5-20251101"); // effort without adaptive thinking
  opus45.effort = "medium";
  CHECK_FALSE(a->encode(opus45).body.contains("thinking"));
  auto sonnet45 = conversation("claude-sonnet-4-5");
  sonnet45.effort = "low";
  CHECK_THROWS_AS(a->encode(sonnet45), llm::llm_error);
  auto gemini = conversation("gemini-3-flash-preview");
  gemini.effort = "low";
  const auto g = llm::make_provider("gemini", "http://x", "k");
  REQUIRE_DOCUMENTED(*g, gemini);
  CHECK(g->encode(gemini).body["generationConfig"]["thinkingConfig"] ==
        json{{"thinkingLevel", "low"}, {"includeThoughts", true}});
  gemini.effort = "xhigh";
  CHECK_THROWS_AS(g->encode(gemini), llm::llm_error);
  auto old_gemini = conversation("gemini-2.5-pro");
  old_gemini.effort = "high";
  CHECK_THROWS_AS(g->encode(old_gemini), llm::llm_error);
  auto o3 = conversation("o3");
  o3.effort = "high";
  const auto o = llm::make_provider("openai", "http://x", "");
  REQUIRE_DOCUMENTED(*o, o3);
  CHECK(o->encode(o3).body["reasoning"] == json{{"effort", "high"}, {"summary", "auto"}}); // Responses
  o3.api = "chat";
  REQUIRE_DOCUMENTED(*o, o3);
  CHECK(o->encode(o3).body["reasoning_effort"] == "high");
  o3.effort = "minimal"; // gpt-5's level, not o3's (adapters/models.json): refused before anything is sent
  CHECK_THROWS_AS(o->encode(o3), llm::llm_error);
}

TEST_CASE("long generations stream by default, and every streamed request is as documented") {
  fake_llm_server server(llm_fixtures());
  for (const char* provider : {"anthropic", "gemini", "openai"}) {
    INFO(provider);
    auto c = client_of(server, provider, options(llm::stream_mode::automatic));
    auto shortish = conversation("doc_text");
    shortish.max_tokens = 1024;
    c.complete(shortish, {"", 0});
    auto unbounded = conversation("doc_text"); // no output limit (Anthropic: its default of 16384)
    c.complete(unbounded, {"", 1});
  }
  const auto requests = server.requests();
  REQUIRE(requests.size() == 6);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    INFO(requests[i].provider << " request " << i);
    CHECK(requests[i].streamed == (i % 2 == 1));
  }
  CHECK(requests[3].path.find(":streamGenerateContent") != std::string::npos);
  CHECK(json::parse(requests[5].body)["stream_options"] == json{{"include_usage", true}});
  CHECK(server.violations().empty());
}

TEST_CASE("a generation our own time limit cut is not sent again") {
  fake_llm_server server(llm_fixtures());
  for (const auto stream : {llm::stream_mode::never, llm::stream_mode::always}) {
    auto o = options(stream, 3);
    o.request_timeout = std::chrono::milliseconds(400);
    auto c = client_of(server, "anthropic", o);
    try {
      c.complete(conversation("slow"), {"", 0});
      FAIL("the call succeeded");
    } catch (const llm::llm_error& e) {
      INFO(e.what());
      CHECK(e.kind() == llm::error_kind::timeout);
      CHECK(e.attempts() == 1);
      CHECK(std::string(e.what()).find("not sent again") != std::string::npos);
    }
  }
  CHECK(server.count("slow") == 2);
}
