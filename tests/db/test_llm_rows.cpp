// Schema v4: LLM exchanges (newest wins, ok-only lookups), candidate origins, generation settings, and the
// cost totals per model with problems solved, solved strictly and calls replayed from another run.
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <array>

using namespace kj;
using namespace kj::test;
using namespace kj::test::db;

namespace {

kj::db::llm_exchange_record exchange(std::int64_t run, const std::string& hash, int seq, bool ok,
                                     double cost) {
  kj::db::llm_exchange_record x;
  x.run_id = run;
  x.provider = "anthropic";
  x.model = "claude-test";
  x.endpoint = "https://api.anthropic.com/v1/messages";
  x.request_hash = hash;
  x.seq = seq;
  x.purpose = "L1/1 sample " + std::to_string(seq);
  x.request_json = R"({"model":"claude-test"})";
  x.ok = ok;
  x.error_kind = ok ? "" : "server";
  x.input_tokens = 100, x.cache_read_tokens = 10, x.cache_write_tokens = 1, x.output_tokens = 50;
  if (ok) x.cost_usd = cost;
  x.attempts = 1;
  return x;
}

} // namespace

TEST_CASE("exchanges are found by request hash and seq, the newest first, failures only when asked") {
  scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto run = store.create_run(make_run("r1"));
  store.insert_llm_exchange(exchange(run, "h", 0, true, 0.5));
  const auto failed = store.insert_llm_exchange(exchange(run, "h", 0, false, 0));
  store.insert_llm_exchange(exchange(run, "h", 1, true, 0.25));
  CHECK(store.find_llm_exchange(run, "h", 0, false)->id == failed); // a replay reproduces the last outcome
  const auto ok = store.find_llm_exchange(run, "h", 0, true);       // a resumed run reuses the last success
  REQUIRE(ok);
  CHECK((ok->ok && ok->cost_usd == 0.5 && ok->cache_write_tokens == 1));
  CHECK_FALSE(ok->http_status);
  CHECK_FALSE(store.find_llm_exchange(run, "h", 2, false));
  CHECK_FALSE(store.find_llm_exchange(run, "other", 0, false));
  CHECK(store.llm_spent_usd(run) == Approx(0.75));

  store.upsert_llm_generation({run, "anthropic", "claude-test", 0, R"({"samples":2})"});
  store.upsert_llm_generation({run, "anthropic", "claude-test", 0, R"({"samples":3})"});
  CHECK(store.get_llm_generation(run)->settings_json == R"({"samples":3})");
  CHECK_FALSE(store.get_llm_generation(run + 1));
}

TEST_CASE(
    "cost totals count a run's own calls and the ones it replayed, and the problems each model solved") {
  scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto stack = store.upsert_stack(make_stack());
  const auto live = store.create_run(make_run("live", stack));
  const auto replay = store.create_run(make_run("replay", stack));
  const auto p1 = store.upsert_problem(make_problem(1, 1));
  const auto p2 = store.upsert_problem(make_problem(1, 2));
  const auto c1 = store.upsert_candidate(make_candidate(p1, 0, "A"));
  const auto c2 = store.upsert_candidate(make_candidate(p1, 1, "B"));
  const auto c3 = store.upsert_candidate(make_candidate(p2, 0, "C"));
  std::int64_t x[3];
  for (int i = 0; i < 3; ++i)
    x[i] = store.insert_llm_exchange(exchange(live, "h" + std::to_string(i), 0, true, 1.0));
  store.insert_llm_exchange(exchange(live, "h9", 0, false, 0)); // a failed call
  for (const auto run : {live, replay})
    for (int i = 0; i < 3; ++i)
      store.upsert_candidate_origin({std::array{c1, c2, c3}[i], run, x[i],
                                     run == live ? "anthropic" : "replay", "claude-test", "prompt", 0, "req",
                                     "code", ""});
  // Problem 1 solved (c2 correct and strict pass), problem 2 not (c3 incorrect).
  auto e1 = make_evaluation(live, p1, c1, stack);
  e1.verdict = kj::verdict::incorrect;
  auto e2 = make_evaluation(live, p1, c2, stack);
  e2.verdict = kj::verdict::correct, e2.strict_verdict = kj::strict_verdict::pass;
  auto e3 = make_evaluation(live, p2, c3, stack);
  e3.verdict = kj::verdict::incorrect;
  for (const auto& e : {e1, e2, e3})
    store.insert_evaluation(e);

  const auto rows = store.llm_costs("live");
  REQUIRE(rows.size() == 1);
  CHECK((rows[0].calls == 4 && rows[0].failed_calls == 1 && rows[0].replayed_calls == 0));
  CHECK((rows[0].input_tokens == 400 && rows[0].output_tokens == 200));
  CHECK(rows[0].cost_usd == Approx(3.0));
  CHECK((rows[0].problems == 2 && rows[0].solved == 1 && rows[0].solved_strict == 1));
  const auto replayed = store.llm_costs("replay");
  REQUIRE(replayed.size() == 1);
  CHECK((replayed[0].calls == 3 && replayed[0].replayed_calls == 3 && replayed[0].solved == 0));

  // kj results shows each evaluation's generating call (read with the evaluation rows).
  kj::db::evaluation_filter filter;
  filter.run_uid = "live";
  const auto results = store.evaluation_rows(filter);
  REQUIRE(results.size() == 3);
  CHECK((results[0].input_tokens == 100 && results[0].output_tokens == 50 && results[0].cost_usd == 1.0));
  // An origin written again is replaced, not duplicated.
  store.upsert_candidate_origin(
      {c1, live, x[0], "anthropic", "claude-test", "prompt2", 0, "req", "no_code", "why"});
  CHECK(store.get_candidate_origin(c1, live)->extraction == "no_code");
  CHECK(count_rows(dir / "kj.sqlite", "candidate_origins") == 6);
}
