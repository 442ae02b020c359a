// The agent's budgets and its other adapters: a model that never submits stops at the turn limit (with
// context management at work) and at dollar limits; Anthropic and Gemini drive the same loop, with thinking
// signatures sent back verbatim and Anthropic's context editing asked for.
#include "agent_test_support.hpp"

#include <nlohmann/json.hpp>

using namespace kj;
using namespace kj::test;
using nlohmann::json;

TEST_CASE("a model that never submits stops at --max-turns, old turns leave the context, none is lost") {
  fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
  scratch_dir dir;
  const auto run =
      run_kj(agent_args(server, dir, "openai", "looping",
                        {"--ids", "3", "--max-turns", "8", "--context-tokens", "4000", "--run-id", "turns"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(server.count("looping") == 8);
  const db::store store = db::store::open_read_only(dir / "kj.sqlite");
  const auto trajectories = store.trajectories("turns");
  REQUIRE(trajectories.size() == 1);
  const auto t = store.get_transcript(trajectories[0].id);
  REQUIRE(t);
  require_script_followed(*t);
  CHECK(t->trajectory.status == "turn_limit");
  CHECK(t->trajectory.turns == 8);
  CHECK(t->turns.size() == 8);
  CHECK(t->trajectory.final_candidate_id == 0); // it never wrote model_new.py: nothing to judge
  CHECK(t->trajectory.result_evaluation_id == 0);
  // The budget warning reached the model before the last turns, and the context was managed.
  CHECK(t->turns[5].user_note.find("3 turns are left") != std::string::npos);
  bool managed = false;
  for (const auto& turn : t->turns)
    managed |= turn.context_note.find("old turns dropped") != std::string::npos;
  CHECK(managed);
  // The transcript keeps every turn whole even when the conversation sent was cut.
  for (const auto& calls : t->calls) {
    REQUIRE(calls.size() == 1);
    CHECK(calls[0].result.find("model.py") != std::string::npos);
  }
}

TEST_CASE("dollar budgets: --max-trajectory-usd stops a trajectory, --budget-usd the whole run") {
  fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
  scratch_dir dir;
  // A turn costs about $0.003 (3000 prompt words at $1 per million).
  const auto one = run_kj(agent_args(server, dir, "openai", "looping",
                                     {"--ids", "3", "--max-trajectory-usd", "0.004", "--run-id", "usd"}));
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const auto run =
      run_kj(agent_args(server, dir, "openai", "looping",
                        {"--ids", "3", "--attempts", "2", "--budget-usd", "0.004", "--run-id", "run-usd"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const db::store store = db::store::open_read_only(dir / "kj.sqlite");
  const auto usd = store.trajectories("usd");
  REQUIRE(usd.size() == 1);
  CHECK(usd[0].status == "usd_limit");
  CHECK((usd[0].turns >= 1 && usd[0].turns < 8));
  CHECK(*usd[0].cost_usd >= 0.004);
  const auto both = store.trajectories("run-usd");
  REQUIRE(both.size() == 2);
  CHECK(both[0].status == "run_usd_limit");
  CHECK(both[1].status == "run_usd_limit");
  CHECK(both[1].turns == 0); // the first attempt spent the run's budget
  CHECK(store.llm_spent_usd(*store.find_run("run-usd")) < 0.004 + *both[0].cost_usd);
  // Without a price for the model a dollar budget is refused before anything runs.
  const auto unpriced = run_kj(
      agent_args(server, dir, "openai", "unpriced-model", {"--ids", "3", "--max-trajectory-usd", "1"}));
  CHECK(unpriced.exit_code == 2);
  CHECK(unpriced.err.find("needs a price") != std::string::npos);
}

TEST_CASE(
    "Anthropic and Gemini drive the same loop, thinking signatures come back, context editing is asked for") {
  fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
  scratch_dir dir;
  ::setenv("ANTHROPIC_API_KEY", "test-key-agent-a", 1);
  ::setenv("GEMINI_API_KEY", "test-key-agent-g", 1);
  // Model "wire" (tests/fixtures/agent/cpu/wire): file tools and thinking only, nothing judged, so that the
  // test costs two kj starts per adapter; the judging tools are the same code for every adapter.
  for (const char* adapter : {"anthropic", "gemini"}) {
    INFO(adapter);
    const auto run = run_kj(agent_args(server, dir, adapter, "wire", {"--ids", "3", "--run-id", adapter}));
    INFO(run.err);
    REQUIRE(run.exit_code == 0);
    const db::store store = db::store::open_read_only(dir / "kj.sqlite");
    const auto trajectories = store.trajectories(adapter);
    REQUIRE(trajectories.size() == 1);
    const auto t = store.get_transcript(trajectories[0].id);
    require_script_followed(*t); // the server checks that each turn's thinking signature came back
    CHECK(t->trajectory.status == "submitted");
    CHECK(tools_called(*t) ==
          std::vector<std::string>{"write_file", "list_files", "read_file", "edit_file", "submit"});
    REQUIRE(t->turns.size() == 4);
    CHECK(t->turns[0].thinking.find("(outer, reduced, inner)") != std::string::npos);
    CHECK(t->turns[3].thinking.find("wire check") != std::string::npos);
    CHECK(t->calls[1][1].result.find("sum_middle_launch") != std::string::npos); // read_file's text came back
    CHECK(read_file(std::filesystem::path(t->trajectory.workspace) / "kernels" / "sum.cpp")
              .find("static_cast<double>(row[i])") != std::string::npos);
    CHECK(t->trajectory.final_candidate_id == 0); // no model_new.py: nothing to judge or re-measure
    CHECK(t->trajectory.result_evaluation_id == 0);
  }
  bool editing = false;
  for (const auto& r : server.requests())
    if (r.provider == "anthropic") {
      const json body = json::parse(r.body);
      editing = body.contains("context_management") &&
                body["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919" &&
                r.headers.at("anthropic-beta") == "context-management-2025-06-27";
      CHECK(body["tools"].size() == 8);
    }
  CHECK(editing);
}

TEST_CASE("an agent run in which no request to the model succeeds fails, exits 1 and says why") {
  fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
  scratch_dir dir;
  const auto run =
      run_kj(agent_args(server, dir, "openai", "bad_request", {"--ids", "3", "--run-id", "refused"}));
  INFO(run.err);
  CHECK(run.exit_code == 1);
  CHECK(run.err.find("no request to the model succeeded in 1 trajectories; the first error:") !=
        std::string::npos);
  CHECK(run.err.find("stand-in message") != std::string::npos); // the provider's own words
  const db::store store = db::store::open_read_only(dir / "kj.sqlite");
  const auto recorded = store.get_run(*store.find_run("refused"));
  CHECK(recorded->status == "failed");
  CHECK(recorded->detail.find("no request to the model succeeded") != std::string::npos);
  // kj runs describes it as the agent's run of its own selection (no example candidates took part).
  const auto listed = run_kj({"runs", "--db", (dir / "kj.sqlite").string()});
  CHECK(listed.out.find("built-in agent, openai/bad_request") != std::string::npos);
  CHECK(listed.out.find("ids 3") != std::string::npos);
  CHECK(listed.out.find("examples") == std::string::npos);
}
