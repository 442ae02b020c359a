// Issue 24's acceptance: `kj agent --adapter anthropic` (claude-opus-4-7), `--adapter gemini`
// (gemini-3-flash-preview) and, issue 45's, `--adapter openai` (gpt-5.4: the Responses API) complete the CPU
// acceptance problems L1 1-3 against the fake provider in documentation mode (every request checked against
// the provider's documented schema and rules, every answer streamed as the provider documents), with tool
// calls and thinking (--effort high: adaptive thinking, thinkingLevel). Gemini's L1 3 script has the provider
// reject one function call (MALFORMED_FUNCTION_CALL). The Responses API's reasoning items must come back each
// turn, encrypted content included (the script checks). CI runs Anthropic on L1 1, Gemini and OpenAI on L1 3
// (the loop itself is the openai test's, on L1 1-3); KJ_AGENT_PROVIDERS_ALL=1 runs both on L1 1-3.
#include "agent_test_support.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

using namespace kj;
using namespace kj::test;
using nlohmann::json;

namespace {

// What every request of the run carried: a stream, the documented thinking control, no violation.
void check_requests(const fake_llm_server& server, const std::string& adapter, std::size_t problems) {
  const auto requests = server.requests();
  REQUIRE(requests.size() >= 3 * problems); // a turn a request: at least compile, verify, submit
  for (const auto& r : requests) {
    INFO(r.provider << " " << r.path);
    CHECK(r.streamed); // long generations (thinking, no output limit) stream by default
    const json body = json::parse(r.body);
    if (adapter == "anthropic") {
      CHECK(body["thinking"] == json{{"type", "adaptive"}, {"display", "summarized"}});
      CHECK(body["output_config"] == json{{"effort", "high"}});
    } else if (adapter == "openai") { // never chat completions with tools and an effort: refused for gpt-5.4
      CHECK(r.path == "/v1/responses");
      CHECK(body["reasoning"] == json{{"effort", "high"}, {"summary", "auto"}});
      CHECK(body["store"] == false);
    } else {
      CHECK(body["generationConfig"]["thinkingConfig"] ==
            json{{"thinkingLevel", "high"}, {"includeThoughts", true}});
      for (const json& d : body["tools"][0]["functionDeclarations"])
        CHECK_FALSE(d.contains("parameters")); // full JSON Schema goes in parametersJsonSchema
    }
  }
  const auto violations = server.violations();
  for (const auto& v : violations)
    UNSCOPED_INFO(v);
  CHECK(violations.empty());
}

void check_gemini_rejected_call(const db::trajectory_transcript& t) {
  bool rejected = false;
  for (const auto& turn : t.turns)
    rejected |= turn.stop_reason == "tool_call_error";
  CHECK(rejected);
  CHECK(t.trajectory.turns == 5); // the rejected turn is a turn (it cost tokens) that left no message
}

} // namespace

TEST_CASE("kj agent --adapter anthropic, gemini and openai (Responses) complete L1 1-3 as documented") {
  const std::pair<const char*, const char*> runs[] = {
      {"anthropic", "claude-opus-4-7"}, {"gemini", "gemini-3-flash-preview"}, {"openai", "gpt-5.4"}};
  ::setenv("ANTHROPIC_API_KEY", "test-key-agent-a", 1);
  ::setenv("GEMINI_API_KEY", "test-key-agent-g", 1);
  ::setenv("OPENAI_API_KEY", "test-key-agent-o", 1);
  const char* all = std::getenv("KJ_AGENT_PROVIDERS_ALL");
  const bool every_problem = all != nullptr && std::string(all) == "1";
  for (const auto& [adapter, model] : runs) {
    INFO(adapter);
    const std::string ids = every_problem ? "1-3" : std::string(adapter) == "anthropic" ? "1" : "3";
    const std::size_t problems = every_problem ? 3 : 1;
    fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
    scratch_dir dir;
    const auto run = run_kj(
        agent_args(server, dir, adapter, model, {"--ids", ids, "--effort", "high", "--run-id", adapter}));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const db::store store = db::store::open_read_only(dir / "kj.sqlite");
    const auto trajectories = store.trajectories(adapter);
    REQUIRE(trajectories.size() == problems);
    for (const auto& summary : trajectories) {
      const auto t = store.get_transcript(summary.id);
      REQUIRE(t);
      require_script_followed(*t); // each thinking signature came back, each expectation was met
      CHECK(t->trajectory.status == "submitted");
      CHECK(t->trajectory.result_evaluation_id != 0);
      CHECK((summary.cost_usd && *summary.cost_usd > 0));
      const int number = store.get_problem(summary.problem_id)->number;
      if (number == 3) {
        CHECK(t->turns[0].thinking.find("(outer, reduced, inner)") != std::string::npos);
        if (std::string(adapter) == "openai") {    // the scripts give reasoning_tokens for OpenAI only
          CHECK(t->turns[0].reasoning_tokens > 0); // counted in their own bucket
          CHECK(t->trajectory.reasoning_tokens >= t->turns[0].reasoning_tokens);
        }
        if (std::string(adapter) == "gemini") check_gemini_rejected_call(*t);
      }
    }
    check_requests(server, adapter, problems);
    if (std::string(adapter) == "openai") { // reasoning tokens are shown in kj costs, in their own bucket
      const auto costs = run_kj({"costs", "--db", (dir / "kj.sqlite").string(), "--run", adapter});
      INFO(costs.out);
      CHECK(costs.out.find("reasoning") != std::string::npos);
      const auto as_json =
          run_kj({"costs", "--db", (dir / "kj.sqlite").string(), "--run", adapter, "--format", "json"});
      CHECK(json::parse(as_json.out)["models"][0]["reasoning_tokens"].get<int>() > 0);
    }
  }
}
