// `kj generate` and `kj costs` through the real binary against the fake provider: candidates and files from
// replies, replay offline, budgets, and errors that stop a generation.
#include "llm_test_support.hpp"
#include "tests/support/catch_compat.hpp"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <thread>
#include <tuple>

using namespace kj;
using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json costs(const scratch_dir& dir, const std::string& run) {
  const auto r = run_kj({"costs", "--db", (dir / "kj.sqlite").string(), "--run", run, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

} // namespace

TEST_CASE("kj generate stores the replies' code as candidates and files, no_code ones included, and costs") {
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  const auto r = run_kj(generate_args(server, dir, "openai", "test-model",
                                      {"--samples", "3", "--level", "1", "--ids", "1-2", "--concurrency", "1",
                                       "--out", (dir / "out").string(), "--run-id", "gen1"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // Problem 1 has one example answer, problem 2 two: the other samples were answered without code.
  for (const char* file : {"level_1_problem_1_sample_0_kernel.py", "level_1_problem_2_sample_0_kernel.py",
                           "level_1_problem_2_sample_1_kernel.py"})
    CHECK(read_file(dir / "out" / file) ==
          read_file(source_dir() / "examples" / "candidates" / "cpu" / file));
  CHECK(std::distance(fs::directory_iterator(dir / "out"), fs::directory_iterator()) == 3);
  CHECK(r.err.find("6 candidates (3 without usable code)") != std::string::npos);
  CHECK(r.out.find("judge them: kj run --adapter replay --from gen1") != std::string::npos);
  const json c = costs(dir, "gen1")["models"];
  REQUIRE(c.size() == 1);
  CHECK(c[0]["adapter"] == "openai");
  CHECK(c[0]["calls"] == 6);
  CHECK(c[0]["cache_read_tokens"].get<int>() > 0); // later samples of a problem hit the server's cache
  CHECK(c[0]["cost_usd"].get<double>() > 0);
  CHECK(c[0]["solved"] == 0); // nothing was judged
  CHECK(c[0]["cost_per_solved_usd"].is_null());

  // Replay: the same candidates from the recording, the server not asked again.
  const std::size_t asked = server.requests().size();
  const auto replay =
      run_kj({"generate", "--adapter", "replay", "--from", "gen1", "--db", (dir / "kj.sqlite").string(),
              "--level", "1", "--ids", "1-2", "--out", (dir / "again").string(), "--run-id", "gen2"});
  INFO(replay.err);
  REQUIRE(replay.exit_code == 0);
  CHECK(server.requests().size() == asked);
  for (const auto& entry : fs::directory_iterator(dir / "out"))
    CHECK(read_file(dir / "again" / entry.path().filename()) == read_file(entry.path()));
  CHECK(costs(dir, "gen2")["models"][0]["replayed_calls"] == 6);

  // A question the recording does not hold is an error that says so.
  const auto unknown = run_kj({"generate", "--adapter", "replay", "--from", "gen1", "--db",
                               (dir / "kj.sqlite").string(), "--level", "1", "--ids", "3"});
  CHECK(unknown.exit_code == 1); // a replay that cannot answer is no longer the recorded run
  CHECK(unknown.err.find("the recording has no answer to this request (L1/3_Sum_Reduction.py sample 0") !=
        std::string::npos);
  // Replay settings come from the recording: asking for others is refused.
  const auto mixed = run_kj({"generate", "--adapter", "replay", "--from", "gen1", "--model", "x", "--db",
                             (dir / "kj.sqlite").string()});
  CHECK(mixed.exit_code == 2);
  CHECK(mixed.err.find("--model cannot be used with --adapter replay") != std::string::npos);
  // A generation's paid answers are not removed without --force, as a finished run's evaluations are not.
  const auto rm = run_kj({"runs", "rm", "gen1", "--db", (dir / "kj.sqlite").string()});
  CHECK(rm.exit_code == 2);
  CHECK(rm.err.find("run gen1 generated its candidates") != std::string::npos);
  // kj runs: a generation judged nothing; its device is only the one its prompts asked for.
  const auto listed = run_kj({"runs", "--db", (dir / "kj.sqlite").string()});
  const auto line = listed.out.substr(listed.out.find("gen1"));
  CHECK(line.substr(0, line.find('\n')).find(" -         0  ") != std::string::npos); // no device
  CHECK(line.substr(0, line.find('\n')).find("kj generate, kernels asked for cpu") != std::string::npos);
}

TEST_CASE("kj generate stops at the budget, and on errors no later call could fix") {
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  const auto budget = run_kj(generate_args(server, dir, "openai", "test-model",
                                           {"--samples", "3", "--level", "1", "--ids", "1-2", "--concurrency",
                                            "1", "--budget-usd", "0.000001", "--run-id", "b"}));
  INFO(budget.err);
  CHECK(budget.exit_code == 0);
  CHECK(budget.err.find("5 samples not asked for (budget $0.00 reached") != std::string::npos);
  CHECK(costs(dir, "b")["models"][0]["calls"] == 1);

  ::setenv("ANTHROPIC_API_KEY", "sk-ant-test-unauthorized", 1);
  const auto auth = run_kj(generate_args(
      server, dir, "anthropic", "unauthorized",
      {"--samples", "2", "--level", "1", "--ids", "1-2", "--concurrency", "1", "--run-id", "auth"}));
  CHECK(auth.exit_code == 1);
  CHECK(auth.err.find(
            "anthropic: HTTP 401 authentication_error: invalid x-api-key (request id req_01Unauthorized") !=
        std::string::npos);
  CHECK(server.count("unauthorized") == 1); // the first 401 stopped the generation
  const json failed = costs(dir, "auth")["models"][0];
  CHECK((failed["calls"] == 1 && failed["failed_calls"] == 1));

  ::unsetenv("ANTHROPIC_API_KEY");
  const auto no_key =
      run_kj(generate_args(server, dir, "anthropic", "claude-test", {"--level", "1", "--ids", "1"}));
  CHECK(no_key.exit_code == 2);
  CHECK(no_key.err.find("anthropic: no API key: set ANTHROPIC_API_KEY in the environment") !=
        std::string::npos);
  const auto bad_budget =
      run_kj(generate_args(server, dir, "openai", "unpriced-model", {"--budget-usd", "1"}));
  CHECK(bad_budget.exit_code == 2);
  CHECK(bad_budget.err.find("has no price for model 'unpriced-model'") != std::string::npos);
}

TEST_CASE("a reply in prose is a no_code candidate, written to no file") {
  fake_llm_server server(llm_fixtures());
  scratch_dir dir;
  ::setenv("ANTHROPIC_API_KEY", "sk-ant-test-prose", 1);
  const auto r = run_kj(generate_args(server, dir, "anthropic", "no_code",
                                      {"--level", "1", "--ids", "1", "--out", (dir / "out").string()}));
  ::unsetenv("ANTHROPIC_API_KEY");
  INFO(r.err);
  REQUIRE(r.exit_code == 1); // nothing to judge: a failed generation for scripts (issue 25)
  CHECK(r.err.find("1 candidate (1 without usable code)") != std::string::npos);
  CHECK(r.err.find("kj: no candidate with code was generated") != std::string::npos);
  CHECK(fs::is_empty(dir / "out"));
}

TEST_CASE("generation flags without --adapter, and --candidates with it, are refused") {
  const auto r = run_kj({"run", "--model", "x", "--db", "/nonexistent/kj.sqlite"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--model needs --adapter") != std::string::npos);
  const auto both = run_kj({"run", "--adapter", "openai", "--model", "x", "--candidates", "identity"});
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("--candidates and --adapter both name where candidates come from") !=
        std::string::npos);
}

TEST_CASE("kj costs names the price rows checked more than 90 days ago, marking those the run used") {
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  const auto r = run_kj(
      generate_args(server, dir, "openai", "test-model", {"--level", "1", "--ids", "1", "--run-id", "old"}));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  write_file(dir / "p.json", R"({"date": "2026-11-26", "unit": "USD per 1M tokens", "models": [
    {"match": ["test-model"], "provider": "openai", "input": 1, "cache_read": 0.1, "cache_write": 0, "output": 4,
     "source": "https://example.com/a", "checked": "2020-01-01"},
    {"match": ["other-old"], "input": 1, "cache_read": 0, "cache_write": 0, "output": 1,
     "source": "https://example.com/b", "checked": "2021-06-30"},
    {"match": ["fresh"], "input": 1, "cache_read": 0, "cache_write": 0, "output": 1,
     "source": "https://example.com/c", "checked": "2999-01-01"}]})");
  const std::string db = (dir / "kj.sqlite").string(), prices = (dir / "p.json").string();
  const auto table = run_kj({"costs", "--db", db, "--run", "old", "--prices", prices});
  INFO(table.out << table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("2 of 3 rows of the price table") != std::string::npos);
  CHECK(table.out.find("* test-model") != std::string::npos); // prices a model of this run
  CHECK(table.out.find("other-old") != std::string::npos);
  CHECK(table.out.find("fresh") == std::string::npos);
  const auto as_json = run_kj({"costs", "--db", db, "--run", "old", "--prices", prices, "--format", "json"});
  REQUIRE(as_json.exit_code == 0);
  const json stale = json::parse(as_json.out)["prices"]["stale"];
  REQUIRE(stale.size() == 2);
  CHECK((stale[0]["used_by_run"] == true && stale[0]["checked"] == "2020-01-01"));
  CHECK(stale[0]["age_days"].get<int>() > 2000);
  CHECK((stale[1]["used_by_run"] == false && stale[1]["source"] == "https://example.com/b"));
}

TEST_CASE(
    "pre-flight: a request the provider documents as invalid for the model is refused before any is sent") {
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  ::setenv("GEMINI_API_KEY", "test-key", 1);
  // Gemini 3 thinks by level: a thinking budget is refused once, with exit 2, naming the levels.
  const auto budget = run_kj(generate_args(server, dir, "gemini", "gemini-3-pro-preview",
                                           {"--level", "1", "--ids", "1", "--thinking-tokens", "2048"}));
  ::unsetenv("GEMINI_API_KEY");
  INFO(budget.err);
  CHECK(budget.exit_code == 2);
  CHECK(budget.err.find("thinks by level") != std::string::npos);
  // An effort level the provider lacks.
  const auto effort = run_kj(
      generate_args(server, dir, "openai", "gpt-5.1", {"--level", "1", "--ids", "1", "--effort", "ultra"}));
  INFO(effort.err);
  CHECK(effort.exit_code == 2);
  CHECK(effort.err.find("effort 'ultra' is not one of") != std::string::npos);
  // A level the provider has but the model lacks (the model table, adapters/models.json): gpt-5's "minimal"
  // asked of gpt-5.4, for kj generate and for kj agent alike, naming the model's own levels.
  const auto minimal = run_kj(
      generate_args(server, dir, "openai", "gpt-5.4", {"--level", "1", "--ids", "1", "--effort", "minimal"}));
  INFO(minimal.err);
  CHECK(minimal.exit_code == 2);
  CHECK(minimal.err.find("effort 'minimal' is not one of none, low, medium, high, xhigh for gpt-5.4") !=
        std::string::npos);
  auto agent =
      generate_args(server, dir, "openai", "gpt-5.4", {"--level", "1", "--ids", "1", "--effort", "minimal"});
  agent[0] = "agent";
  const auto agent_minimal = run_kj(agent);
  INFO(agent_minimal.err);
  CHECK(agent_minimal.exit_code == 2);
  CHECK(agent_minimal.err.find("is not one of none, low, medium, high, xhigh") != std::string::npos);
  // More output than the model can give.
  const auto too_long = run_kj(generate_args(server, dir, "openai", "gpt-4.1",
                                             {"--level", "1", "--ids", "1", "--max-tokens", "50000"}));
  CHECK(too_long.exit_code == 2);
  CHECK(too_long.err.find("above gpt-4.1's output limit of 32768 tokens") != std::string::npos);
  // --openai-api belongs to the openai adapter.
  ::setenv("ANTHROPIC_API_KEY", "test-key", 1);
  const auto misplaced = run_kj(generate_args(server, dir, "anthropic", "claude-opus-4-6",
                                              {"--level", "1", "--ids", "1", "--openai-api", "chat"}));
  ::unsetenv("ANTHROPIC_API_KEY");
  CHECK(misplaced.exit_code == 2);
  CHECK(misplaced.err.find("--openai-api is for --adapter openai") != std::string::npos);
  // A key too short to redact without changing what is recorded.
  ::setenv("OPENAI_API_KEY", "x", 1);
  const auto short_key =
      run_kj(generate_args(server, dir, "openai", "test-model", {"--level", "1", "--ids", "1"}));
  ::unsetenv("OPENAI_API_KEY");
  CHECK(short_key.exit_code == 2);
  CHECK(short_key.err.find("the API key in OPENAI_API_KEY has 1 character") != std::string::npos);
  // gpt-5.2 on refuse function tools with an effort on chat completions: the agent's requests carry tools.
  ::setenv("OPENAI_API_KEY", "test-key-123", 1);
  auto chat_agent = generate_args(server, dir, "openai", "gpt-5.4",
                                  {"--level", "1", "--ids", "1", "--effort", "high", "--openai-api", "chat"});
  chat_agent[0] = "agent";
  const auto chat = run_kj(chat_agent);
  CHECK(chat.exit_code == 2);
  CHECK(chat.err.find("refuses function tools with an effort on chat completions") != std::string::npos);
  // A batch is priced after it is submitted whole: a budget cannot stop it.
  const auto batch_budget = run_kj(generate_args(
      server, dir, "openai", "test-model", {"--level", "1", "--ids", "1", "--batch", "--budget-usd", "1"}));
  ::unsetenv("OPENAI_API_KEY");
  CHECK(batch_budget.exit_code == 2);
  CHECK(batch_budget.err.find("--batch with --budget-usd") != std::string::npos);
  // --out naming a file is found before anything is asked.
  write_file(dir / "a-file", "x");
  const auto out_file =
      run_kj(generate_args(server, dir, "openai", "test-model",
                           {"--level", "1", "--ids", "1", "--out", (dir / "a-file").string()}));
  CHECK(out_file.exit_code == 2);
  CHECK(out_file.err.find("a file, not a folder") != std::string::npos);
  CHECK(server.requests().empty());           // nothing was sent
  CHECK_FALSE(fs::exists(dir / "kj.sqlite")); // and no run was recorded
}

TEST_CASE("pacing: the provider's rate-limit headers and --rpm space kj generate's requests") {
  const auto gaps_at_least = [](const fake_llm_server& server, const std::string& model, double ms) {
    std::vector<double> at;
    for (const auto& r : server.requests())
      if (r.model == model) at.push_back(r.at_ms);
    REQUIRE(at.size() == 3);
    std::sort(at.begin(), at.end());
    for (std::size_t i = 1; i < at.size(); ++i) {
      INFO("request " << i << " came " << at[i] - at[i - 1] << " ms after the one before");
      CHECK(at[i] - at[i - 1] >= ms);
    }
  };
  fake_llm_server server(llm_fixtures(), source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  // Each answer says no request is left until a reset 1 s away: the next one waits for it (no 429 drawn).
  const auto told = run_kj(generate_args(
      server, dir, "openai", "rate_limit_headers",
      {"--samples", "3", "--level", "1", "--ids", "1", "--concurrency", "1", "--run-id", "told"}));
  INFO(told.err);
  CHECK(told.err.find("3 candidates (3 without usable code), 0 failed calls") != std::string::npos);
  gaps_at_least(server, "rate_limit_headers", 950);
  // --rpm 120: one request every 500 ms, even with 4 allowed at once.
  const auto paced = run_kj(generate_args(server, dir, "openai", "test-model",
                                          {"--samples", "3", "--level", "1", "--ids", "1", "--concurrency",
                                           "4", "--rpm", "120", "--run-id", "rpm"}));
  INFO(paced.err);
  REQUIRE(paced.exit_code == 0);
  gaps_at_least(server, "test-model", 480);
  const auto bad =
      run_kj(generate_args(server, dir, "openai", "test-model", {"--rpm", "0", "--run-id", "x"}));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--rpm") != std::string::npos);
}
