// What kj sends, checked against each provider's documented request schema and rules
// (tests/fixtures/llm/<provider>/_request_schema.json, tests/fake_llm/documented_rules.cpp). These use only
// the request fields kj has always had, so that they also judge the adapters as they were before issue 24.
#include "adapters/llm/errors.hpp"
#include "conformance_support.hpp"

#include <tuple>

using namespace kj;
using namespace kj::test;
using nlohmann::json;

namespace {

// Either kj refuses the request before sending it (a config error naming why), or what it sends conforms.
void refused_or_documented(const llm::provider& p, const llm::request& r) {
  llm::wire_request wire;
  try {
    wire = p.encode(r);
  } catch (const llm::llm_error& e) {
    INFO(e.what());
    CHECK(e.kind() == llm::error_kind::config);
    return;
  }
  const auto found = request_violations(llm_fixtures(), p.name(), r.model, wire.body);
  for (const auto& v : found)
    UNSCOPED_INFO(v);
  CHECK(found.empty());
}

} // namespace

TEST_CASE("the validator itself rejects what the documentation does not allow") {
  const json schema = request_schema(llm_fixtures(), "gemini");
  json body{{"contents", {{{"role", "user"}, {"parts", {{{"text", "hi"}}}}}}},
            {"tools",
             {{{"functionDeclarations",
                {{{"name", "f"},
                  {"description", "d"},
                  {"parameters", {{"type", "object"}, {"additionalProperties", false}}}}}}}}}};
  const auto found = schema_violations(schema, body);
  REQUIRE(found.size() == 1);
  CHECK(found[0].find("additionalProperties") != std::string::npos);
  body["tools"][0]["functionDeclarations"][0].erase("parameters");
  body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"] = {{"additionalProperties", false}};
  CHECK(schema_violations(schema, body).empty());
  body["contents"][0]["parts"] = json::array();
  CHECK(schema_violations(schema, body).size() == 1); // an empty content
  CHECK_FALSE(schema_violations(request_schema(llm_fixtures(), "anthropic"), {{"model", "m"}}).empty());
}

TEST_CASE("plain requests of every adapter are as documented") {
  for (const char* provider : {"anthropic", "gemini", "openai"}) {
    INFO(provider);
    const auto p = llm::make_provider(provider, "http://x", "k");
    auto r = conversation("claude-sonnet-4-5");
    REQUIRE_DOCUMENTED(*p, r);
    r.max_tokens = 512;
    r.temperature = 0.5;
    REQUIRE_DOCUMENTED(*p, r);
  }
}

TEST_CASE("issue 24 item 1: Gemini tool declarations are as documented (full JSON Schema in "
          "parametersJsonSchema)") {
  for (const char* provider : {"anthropic", "gemini", "openai"}) {
    INFO(provider);
    const auto p = llm::make_provider(provider, "http://x", "k");
    auto r = conversation("gemini-3.1-pro-preview");
    r.tools = agent_like_tools();
    REQUIRE_DOCUMENTED(*p, r);
  }
  const json declarations = llm::make_provider("gemini", "http://x", "k")
                                ->encode([] {
                                  auto r = conversation("gemini-3.1-pro-preview");
                                  r.tools = agent_like_tools();
                                  return r;
                                }())
                                .body["tools"][0]["functionDeclarations"];
  CHECK_FALSE(declarations[0].contains("parameters")); // a tool without arguments leaves it unset
  CHECK_FALSE(declarations[0].contains("parametersJsonSchema"));
  CHECK(declarations[1]["parametersJsonSchema"]["additionalProperties"] == false);
}

TEST_CASE("issue 24 item 2: Claude thinking is sent only as the model's documentation allows") {
  const auto p = llm::make_provider("anthropic", "http://x", "k");
  auto legacy = conversation("claude-sonnet-4-5-20250929");
  legacy.max_tokens = 16000;
  legacy.thinking_budget = 10000;
  REQUIRE_DOCUMENTED(*p, legacy);
  CHECK(p->encode(legacy).body["thinking"] == json{{"type", "enabled"}, {"budget_tokens", 10000}});
  // Each of these the API answers with 400; kj must refuse them before sending.
  auto adaptive_only = legacy;
  adaptive_only.model = "claude-opus-4-7";
  refused_or_documented(*p, adaptive_only);
  auto too_small = legacy;
  too_small.thinking_budget = 512;
  refused_or_documented(*p, too_small);
  auto not_below_max = legacy;
  not_below_max.max_tokens = 4096;
  not_below_max.thinking_budget = 4096;
  refused_or_documented(*p, not_below_max);
  auto default_max = legacy; // the default max_tokens (16384) is the limit when none is given
  default_max.max_tokens.reset();
  default_max.thinking_budget = 20000;
  refused_or_documented(*p, default_max);
  auto with_temperature = legacy;
  with_temperature.temperature = 0.7;
  refused_or_documented(*p, with_temperature);
  auto sampling_removed = conversation("claude-opus-4-7");
  sampling_removed.temperature = 0.2;
  refused_or_documented(*p, sampling_removed);
}

TEST_CASE(
    "issue 24 item 3: a blocked prompt or a rejected Gemini call never goes back as an empty model turn") {
  const auto p = llm::make_provider("gemini", "http://x", "k");
  for (const char* scenario : {"doc_blocked_prompt", "doc_malformed_call", "safety"}) {
    INFO(scenario);
    const json step = fixture("gemini", scenario)["steps"][0];
    const llm::reply reply = p->decode(step["body"]);
    auto r = conversation("gemini-3-flash-preview");
    r.messages.push_back(reply.content); // what an agent loop appends
    r.messages.push_back(llm::message::user_text("kj: try again."));
    REQUIRE_DOCUMENTED(*p, r);
  }
  const llm::reply malformed = p->decode(fixture("gemini", "doc_malformed_call")["steps"][0]["body"]);
  CHECK(malformed.stop != llm::stop_reason::other); // told apart from an unexplained stop
  CHECK(malformed.stop != llm::stop_reason::end_turn);
}

TEST_CASE("issue 24 item 3: Gemini 3 thinks by level, Gemini 2.5 by budget") {
  const auto p = llm::make_provider("gemini", "http://x", "k");
  auto old = conversation("gemini-2.5-flash");
  old.thinking_budget = 8192;
  REQUIRE_DOCUMENTED(*p, old);
  CHECK(p->encode(old).body["generationConfig"]["thinkingConfig"] ==
        json{{"thinkingBudget", 8192}, {"includeThoughts", true}});
  auto current = conversation("gemini-3-flash-preview");
  current.thinking_budget = 8192; // a budget for a level model: refused, never sent as thinkingBudget
  try {
    const json config = p->encode(current).body["generationConfig"]["thinkingConfig"];
    CHECK_FALSE(config.contains("thinkingBudget"));
  } catch (const llm::llm_error& e) {
    CHECK(e.kind() == llm::error_kind::config);
  }
}

TEST_CASE("issue 24 item 5: OpenAI reasoning models get max_completion_tokens") {
  for (const char* model : {"o3", "o4-mini", "gpt-5", "gpt-5.4-mini", "gpt-5.5"}) {
    INFO(model);
    auto r = conversation(model);
    r.max_tokens = 4000;
    // By default the Responses API (the model table), whose limit is max_output_tokens.
    const auto responses = llm::make_provider("openai", "https://api.openai.com/v1", "k")->encode(r);
    CHECK(responses.url == "https://api.openai.com/v1/responses");
    CHECK(responses.body["max_output_tokens"] == 4000);
    REQUIRE_DOCUMENTED(*llm::make_provider("openai", "https://api.openai.com/v1", "k"), r);
    r.api = "chat"; // --openai-api chat
    REQUIRE_DOCUMENTED(*llm::make_provider("openai", "https://api.openai.com/v1", "k"), r);
    REQUIRE_DOCUMENTED(*llm::make_provider("openai", "http://localhost:8000/v1", ""), r);
    CHECK(llm::make_provider("openai", "http://localhost:8000/v1", "")
              ->encode(r)
              .body["max_completion_tokens"] == 4000);
  }
  auto local = conversation("Qwen/Qwen3-Coder-30B-A3B-Instruct"); // other servers keep the name they all know
  local.max_tokens = 4000;
  CHECK(llm::make_provider("openai", "http://localhost:8000/v1", "")->encode(local).body["max_tokens"] ==
        4000);
}

TEST_CASE("issue 24 item 5: keys of any length are redacted") {
  for (const char* key : {"k", "ab", "abc", "sk-ant-SECRET"}) {
    INFO(key);
    const auto p = llm::make_provider("openai", "", key);
    CHECK(p->redact(std::string("the key is ") + key + ".").find(key) == std::string::npos);
  }
  CHECK(llm::make_provider("openai", "", "")->redact("nothing to hide") == "nothing to hide");
}

TEST_CASE("a tool round trip of every adapter is as documented") {
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {"anthropic", "doc_tool_use", "claude-sonnet-4-5"},
      {"gemini", "doc_function_call", "gemini-3-flash-preview"},
      {"openai", "doc_tool_calls", "gpt-4o-mini"},
      {"openai-responses", "doc_function_call", "gpt-5.4"}};
  for (const auto& [provider, scenario, model] : cases) {
    INFO(provider);
    const auto p = llm::make_provider(std::string(provider).starts_with("openai") ? "openai" : provider,
                                      "http://x", "k");
    const llm::reply reply = p->decode(fixture(provider, scenario)["steps"][0]["body"]);
    auto r = conversation(model);
    r.tools = agent_like_tools();
    r.messages.push_back(reply.content);
    llm::message results;
    for (const auto& call : reply.tool_calls())
      results.parts.push_back(llm::part::make_tool_result(call.call_id, call.tool_name, "42 degrees"));
    results.parts.push_back(llm::part::make_text("kj: 3 turns are left."));
    r.messages.push_back(results);
    REQUIRE_DOCUMENTED(*p, r);
  }
}

TEST_CASE(
    "issue 45 item 1: OpenAI reasoning models speak the Responses API, their reasoning items sent back") {
  const auto p = llm::make_provider("openai", "https://api.openai.com/v1", "k");
  const llm::reply reply = p->decode(fixture("openai-responses", "doc_function_call")["steps"][0]["body"]);
  for (const char* model : {"gpt-5.4", "gpt-5.5", "gpt-5-pro", "o3-pro", "gpt-5.1-codex-max"}) {
    INFO(model);
    auto r = conversation(model);
    r.tools = agent_like_tools();
    r.effort = std::string(model) == "gpt-5-pro" ? "high" : "medium";
    r.messages.push_back(reply.content);
    llm::message results;
    results.parts.push_back(
        llm::part::make_tool_result(reply.tool_calls().at(0).call_id, "get_weather", "9 C"));
    r.messages.push_back(results);
    const auto wire = p->encode(r);
    // Never chat completions with tools and an effort, which these models refuse with 400.
    CHECK(wire.url == "https://api.openai.com/v1/responses");
    CHECK_FALSE(wire.body.contains("messages"));
    REQUIRE_DOCUMENTED(*p, r);
    CHECK(wire.body["store"] == false);
    CHECK(wire.body["include"] == json::array({"reasoning.encrypted_content"}));
    CHECK(wire.body["reasoning"]["effort"] == *r.effort);
    CHECK(wire.body["tools"][0]["name"] == "compile"); // flat, not under "function"
    // The turn's own items come back verbatim, reasoning (with its encrypted content) before its call,
    // then the call's output.
    const json& input = wire.body["input"];
    REQUIRE(input.size() == 4);
    CHECK(input[1]["type"] == "reasoning");
    CHECK(input[1]["encrypted_content"] == "gAAAAABor0Aw-fake-encrypted-reasoning-of-the-documented-shape==");
    CHECK(input[2]["type"] == "function_call");
    CHECK(input[3] ==
          json{{"type", "function_call_output"}, {"call_id", "call_12345xyz"}, {"output", "9 C"}});
  }
  // Asked for chat completions (--openai-api chat), a current model with tools and an effort is what OpenAI
  // refuses (the fake provider's documented rule): kj refuses it first, nothing sent.
  auto chat = conversation("gpt-5.4");
  chat.tools = agent_like_tools();
  chat.effort = "high";
  chat.api = "chat";
  CHECK_THROWS_AS(p->encode(chat), llm::llm_error);
  CHECK_FALSE(request_violations(llm_fixtures(), "openai", "gpt-5.4",
                                 {{"model", "gpt-5.4"},
                                  {"messages", json::array({{{"role", "user"}, {"content", "x"}}})},
                                  {"tools", json::array()},
                                  {"reasoning_effort", "high"}})
                  .empty());
  // A context edit that dropped the raw items: the call goes back without reasoning, which OpenAI accepts.
  auto edited = conversation("gpt-5.4");
  llm::message bare = reply.content;
  bare.raw_provider.clear();
  bare.raw = nullptr;
  edited.messages.push_back(bare);
  llm::message answer;
  answer.parts.push_back(llm::part::make_tool_result("call_12345xyz", "get_weather", "9 C"));
  edited.messages.push_back(answer);
  REQUIRE_DOCUMENTED(*p, edited);
  CHECK(p->encode(edited).body["input"][1] == json{{"type", "function_call"},
                                                   {"call_id", "call_12345xyz"},
                                                   {"name", "get_weather"},
                                                   {"arguments", R"({"location":"Paris, France"})"}});
}

TEST_CASE("issue 45 item 2: the model table refuses an impossible request before anything is sent") {
  const auto openai = llm::make_provider("openai", "https://api.openai.com/v1", "k");
  auto r = conversation("gpt-5.4");
  r.effort = "minimal"; // gpt-5's level; 5.2 and later take none..xhigh
  try {
    (void)openai->encode(r);
    FAIL("encoded");
  } catch (const llm::llm_error& e) {
    CHECK(e.kind() == llm::error_kind::config);
    CHECK(std::string(e.what()).find("none, low, medium, high, xhigh") != std::string::npos);
    CHECK(std::string(e.what()).find("adapters/models.json") ==
          std::string::npos); // the row's source instead
    CHECK(std::string(e.what()).find("platform.openai.com") != std::string::npos);
  }
  r.effort = "high";
  r.max_tokens = 200'000; // above gpt-5.4's 128000
  CHECK_THROWS_AS(openai->encode(r), llm::llm_error);
  auto sonnet = conversation("claude-sonnet-4-5");
  sonnet.effort = "high"; // takes a thinking budget, no effort
  CHECK_THROWS_AS(llm::make_provider("anthropic", "http://x", "k")->encode(sonnet), llm::llm_error);
  // Claude's default output limit comes from the table, large enough for high effort.
  auto opus = conversation("claude-opus-4-6");
  opus.effort = "high";
  CHECK(llm::make_provider("anthropic", "http://x", "k")->encode(opus).body["max_tokens"] == 32000);
  // An unknown model: every level of its provider, chat completions (an OpenAI-compatible server's name).
  auto local = conversation("Qwen/Qwen3-Coder-30B-A3B-Instruct");
  local.effort = "high";
  CHECK(openai->encode(local).url == "https://api.openai.com/v1/chat/completions");
}
