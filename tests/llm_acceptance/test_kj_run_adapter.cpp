// Issue 13's acceptance: `kj run --adapter openai` against the fake provider answering the built-in suite
// with correct and wrong kernels (and replies without code) records verdicts, tokens and cost; the same run
// replayed offline with `--adapter replay` judges identical candidates.
#include "db/store.hpp"
#include "tests/fake_llm/fake_llm_server.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

using namespace kj;
using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

json results(const std::string& db, const std::string& run) {
  const auto r = run_kj({"results", "--db", db, "--run", run, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

// (level, problem, sample) -> (candidate id, source hash, verdict) of a run, read back through the store.
std::map<std::string, std::tuple<std::int64_t, std::string, std::string>> candidates_of(const std::string& db,
                                                                                        const json& rows) {
  const db::store store = db::store::open_read_only(db);
  std::map<std::string, std::tuple<std::int64_t, std::string, std::string>> out;
  for (const json& row : rows) {
    const auto e = store.get_evaluation(row["evaluation_id"].get<std::int64_t>());
    REQUIRE(e);
    const auto origin = store.get_candidate_origin(e->candidate_id, e->run_id);
    REQUIRE(origin);
    out[row["problem"].get<std::string>() + "#" + std::to_string(row["sample"].get<int>())] = {
        e->candidate_id, origin->prompt_hash, row["verdict"].get<std::string>()};
  }
  return out;
}

} // namespace

TEST_CASE("kj run --adapter openai judges the replies, records tokens and cost, and replays identically") {
  fake_llm_server server(fixtures_dir() / "llm", source_dir() / "examples" / "candidates" / "cpu");
  scratch_dir dir;
  const char* shared_cache = std::getenv("KJ_CACHE_DIR");
  const std::string cache = shared_cache && *shared_cache ? shared_cache : (dir / "cache").string();
  const std::string db = (dir / "kj.sqlite").string();
  const std::vector<std::string> common{"--level",     "1",           "--ids", "1-2", "--device",    "cpu",
                                        "--no-timing", "--no-strict", "--db",  db,    "--cache-dir", cache};
  std::vector<std::string> live{"run",
                                "--adapter",
                                "openai",
                                "--base-url",
                                server.base_url("openai"),
                                "--model",
                                "test-model",
                                "--samples",
                                "3",
                                "--concurrency",
                                "1",
                                "--prices",
                                (fixtures_dir() / "llm" / "prices.json").string(),
                                "--run-id",
                                "live"};
  live.insert(live.end(), common.begin(), common.end());
  const auto run = run_kj(live);
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(server.requests().size() == 6);
  CHECK(run.out.find("tokens in/out") != std::string::npos); // kj results' table, printed at the end
  CHECK(run.out.find("$/solved") != std::string::npos);      // and the cost table

  const json rows = results(db, "live");
  REQUIRE(rows.size() == 6);
  std::map<std::string, int> verdicts;
  for (const json& row : rows) {
    ++verdicts[row["verdict"].get<std::string>()];
    CHECK(row["producer"] == "openai/test-model");
    CHECK(row["output_tokens"].get<int>() > 0);
    CHECK(row["cost_usd"].get<double>() > 0);
  }
  // Problem 1: sample 0 correct; problem 2: sample 0 correct, sample 1 a wrong GELU; the rest had no code.
  CHECK(verdicts == std::map<std::string, int>{{"correct", 2}, {"incorrect", 1}, {"no_code", 3}});
  const auto costs = run_kj({"costs", "--db", db, "--run", "live", "--format", "json"});
  const json model = json::parse(costs.out)["models"][0];
  CHECK(model["calls"] == 6);
  CHECK(model["problems"] == 2);
  CHECK(model["solved"] == 2);
  CHECK(model["cost_per_solved_usd"].get<double>() == Approx(model["cost_usd"].get<double>() / 2));

  std::vector<std::string> replay{"run", "--adapter", "replay", "--from", "live", "--run-id", "replayed"};
  replay.insert(replay.end(), common.begin(), common.end());
  const auto again = run_kj(replay);
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(server.requests().size() == 6); // offline: nothing was sent
  const auto first = candidates_of(db, rows);
  const auto second = candidates_of(db, results(db, "replayed"));
  CHECK(first == second); // the same candidate rows (so the same sources and hashes), prompts and verdicts
  CHECK(json::parse(run_kj({"costs", "--db", db, "--run", "replayed", "--format", "json"})
                        .out)["models"][0]["replayed_calls"] == 6);

  // The same through OpenAI's Responses API (gpt-5.4, by the model table) with an effort: judged alike, and
  // the costs add up.
  std::vector<std::string> responses = live;
  std::replace(responses.begin(), responses.end(), std::string("test-model"), std::string("gpt-5.4"));
  std::replace(responses.begin(), responses.end(), std::string("live"), std::string("responses"));
  responses.insert(responses.end(), {"--effort", "high"});
  const auto gpt = run_kj(responses);
  INFO(gpt.err);
  REQUIRE(gpt.exit_code == 0);
  std::size_t to_responses = 0;
  for (const auto& r : server.requests())
    to_responses += r.path == "/v1/responses" && r.model == "gpt-5.4" ? 1 : 0;
  CHECK(to_responses == 6);
  CHECK(server.violations().empty());
  std::map<std::string, int> gpt_verdicts;
  double row_costs = 0;
  for (const json& row : results(db, "responses")) {
    ++gpt_verdicts[row["verdict"].get<std::string>()];
    row_costs += row["cost_usd"].get<double>();
    CHECK(row["reasoning_tokens"].is_number()); // the reasoning bucket, shown per candidate
  }
  CHECK(gpt_verdicts == verdicts);
  const json gpt_model =
      json::parse(run_kj({"costs", "--db", db, "--run", "responses", "--format", "json"}).out)["models"][0];
  CHECK(gpt_model["calls"] == 6);
  CHECK(gpt_model["cost_usd"].get<double>() == Approx(row_costs));
}
