// kj merge at the DB level: two shard databases of one run (on two stacks) merged into a third that already
// holds other rows: every row arrives once with ids mapped, merging again adds nothing, a run's parts and
// status follow its shards (the refusals: test_merge_refusals.cpp).
#include "merge_fixtures.hpp"

using namespace kj::test;
using namespace kj::test::db;
using namespace kj::test::merge;

TEST_CASE("two shards merge into one run with every row once and ids of the output") {
  shards f;
  const auto before = counts(f.out);
  const auto first = kj::db::merge_database(f.out, f.a);
  const auto second = kj::db::merge_database(f.out, f.b);
  CHECK(first.run_uids == std::vector<std::string>{"r-shards"});
  CHECK(second.evaluations_present == 0);
  const auto after = counts(f.out);
  const std::map<std::string, std::int64_t> expected{{"stacks", 2},
                                                     {"problems", 5},
                                                     {"candidates", 6},
                                                     {"runs", 1},
                                                     {"evaluations", 6},
                                                     {"trials", 12},
                                                     {"timings", 12},
                                                     {"timing_samples", 36},
                                                     {"verification_cases", 12},
                                                     {"static_findings", 6},
                                                     {"builds", 6},
                                                     {"baselines", 6},
                                                     {"baseline_samples", 18},
                                                     {"evaluation_baselines", 6},
                                                     {"llm_exchanges", 2},
                                                     {"candidate_origins", 6},
                                                     {"llm_generations", 1},
                                                     {"run_parts", 2}};
  for (const auto& [table, n] : expected) {
    INFO(table);
    CHECK(after.at(table) - before.at(table) == n);
    CHECK(first.added_to(table) + second.added_to(table) == n);
  }

  auto merged = evaluations_of(f.out, "r-shards");
  auto sources = evaluations_of(f.a, "r-shards");
  const auto from_b = evaluations_of(f.b, "r-shards");
  sources.insert(sources.end(), from_b.begin(), from_b.end());
  std::sort(sources.begin(), sources.end(),
            [](const auto& x, const auto& y) { return x.candidate_source < y.candidate_source; });
  REQUIRE(merged.size() == sources.size());
  for (std::size_t i = 0; i < merged.size(); ++i)
    check_same(merged[i], sources[i]);
  CHECK(evaluations_of(f.out, "r-other").size() == 1);

  // One run, its parts the two shards; shard 2 was still running (killed), so the run is interrupted.
  const auto out = kj::db::store::open(f.out);
  const auto run = out.find_run("r-shards");
  REQUIRE(run);
  CHECK(out.get_run(*run)->status == "interrupted");
  const auto parts = out.run_parts(*run);
  REQUIRE(parts.size() == 2);
  CHECK((parts[0].shard == "1/2" && parts[0].status == "finished" && parts[0].evaluations == 3));
  CHECK((parts[1].shard == "2/2" && parts[1].status == "running" && parts[1].evaluations == 3));
  CHECK(parts[1].source_file == fs::absolute(f.b).string());
}

TEST_CASE("merging a file again adds nothing, and a finished shard updates its part") {
  shards f;
  kj::db::merge_database(f.out, f.a);
  kj::db::merge_database(f.out, f.b);
  const auto once = counts(f.out);
  const auto again = kj::db::merge_database(f.out, f.a);
  CHECK(again.added_total() == 0);
  CHECK(again.evaluations_present == 3);
  CHECK(counts(f.out) == once);

  { // shard 2 is resumed to the end: its part and the run follow
    auto b = kj::db::store::open(f.b);
    b.set_run_status(*b.find_run("r-shards"), "finished");
  }
  CHECK(kj::db::merge_database(f.out, f.b).added_total() == 0);
  const auto out = kj::db::store::open(f.out);
  const auto run = *out.find_run("r-shards");
  CHECK(out.get_run(run)->status == "finished");
  CHECK(out.run_parts(run)[1].status == "finished");
  CHECK(counts(f.out) == once);
}

TEST_CASE("a merged database merges on like its shards: parts are carried, not nested") {
  shards f;
  kj::db::merge_database(f.out, f.a);
  const fs::path second = f.dir / "second.sqlite";
  kj::db::merge_database(second, f.out); // the run with shard 1 as its part, and run r-other
  kj::db::merge_database(second, f.b);
  kj::db::merge_database(f.out, f.b);
  auto direct = counts(f.out), nested = counts(second);
  CHECK(nested["run_parts"] == direct["run_parts"] + 1); // r-other has its part in `second` only
  nested.erase("run_parts"), direct.erase("run_parts");
  CHECK(nested == direct);
  const auto s = kj::db::store::open(second);
  const auto parts = s.run_parts(*s.find_run("r-shards"));
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].source_file == fs::absolute(f.a).string());
  CHECK(parts[1].source_file == fs::absolute(f.b).string());
  CHECK(s.run_parts(*s.find_run("r-other")).size() == 1);
}

TEST_CASE("the built-in agent's rows merge with every reference mapped, in-loop evaluations included") {
  scratch_dir dir;
  const fs::path source = dir / "agent.sqlite", out = dir / "all.sqlite";
  std::int64_t loop_a = 0, loop_b = 0, result = 0;
  {
    auto s = kj::db::store::open(source);
    const auto stack = s.upsert_stack(make_stack("stack-a"));
    const auto run = s.create_run(make_run("r-agent", stack));
    const auto problem = s.upsert_problem(make_problem(1, 2));
    const auto candidate = s.upsert_candidate(make_candidate(problem, 0, "agent's version"));
    auto e = make_evaluation(run, problem, candidate, stack);
    e.purpose = "agent_loop";
    e.started_at = "2026-01-01T00:00:01.000Z";
    loop_a = s.insert_evaluation(e); // verify, then profile of the same version
    e.started_at = "2026-01-01T00:00:02.000Z";
    loop_b = s.insert_evaluation(e);
    result = s.insert_evaluation(make_evaluation(run, problem, candidate, stack));
    kj::db::trajectory_record t{.run_id = run, .problem_id = problem, .producer = "agent/openai/m"};
    t.status = "submitted", t.started_at = "2026-01-01T00:00:00.000Z";
    t.selected_candidate_id = t.final_candidate_id = candidate;
    t.selected_evaluation_id = t.final_evaluation_id = loop_b;
    t.result_evaluation_id = result;
    t.id = s.insert_trajectory(t);
    s.update_trajectory(t);
    s.insert_turn({.trajectory_id = t.id, .turn = 1, .text = "verify, profile"},
                  {{.seq = 0, .tool = "verify", .candidate_id = candidate, .evaluation_id = loop_a},
                   {.seq = 1, .tool = "profile", .candidate_id = candidate, .evaluation_id = loop_b}});
  }
  { // the output holds other rows first, so that every merged id moves
    auto o = kj::db::store::open(out);
    const auto stack = o.upsert_stack(make_stack("stack-z"));
    const auto run = o.create_run(make_run("r-other", stack));
    const auto problem = o.upsert_problem(make_problem(2, 9));
    o.insert_evaluation(make_evaluation(run, problem, o.upsert_candidate(make_candidate(problem, 0)), stack));
  }
  const auto merged = kj::db::merge_database(out, source);
  CHECK(merged.added_to("evaluations") == 3);
  CHECK(merged.added_to("agent_trajectories") == 1);
  CHECK(merged.added_to("agent_turns") == 1);
  CHECK(merged.added_to("agent_tool_calls") == 2);
  CHECK(kj::db::merge_database(out, source).added_total() == 0); // matched by natural keys the second time

  const auto o = kj::db::store::open_read_only(out);
  const auto trajectories = o.trajectories("r-agent");
  REQUIRE(trajectories.size() == 1);
  const auto transcript = o.get_transcript(trajectories[0].id);
  REQUIRE(transcript);
  const auto& t = transcript->trajectory;
  const auto remeasured = o.get_evaluation(t.result_evaluation_id);
  REQUIRE(remeasured);
  CHECK(remeasured->purpose == "result");
  CHECK(o.get_candidate(remeasured->candidate_id)->source == "agent's version");
  CHECK(t.selected_candidate_id == remeasured->candidate_id);
  REQUIRE(transcript->calls.at(0).size() == 2);
  const auto verified = o.get_evaluation(transcript->calls[0][0].evaluation_id);
  const auto profiled = o.get_evaluation(transcript->calls[0][1].evaluation_id);
  REQUIRE((verified && profiled));
  CHECK((verified->purpose == "agent_loop" && profiled->purpose == "agent_loop"));
  CHECK(verified->started_at == "2026-01-01T00:00:01.000Z");
  CHECK(t.selected_evaluation_id == transcript->calls[0][1].evaluation_id);
  CHECK(o.evaluation_count(*o.find_run("r-agent")) == 1); // results only
}
