// Schema v7: the built-in agent's trajectories, turns and tool calls round-trip through the store, a resumed
// run finds finished trajectories only, and reports read results, not in-loop evaluations.
#include "db/migrations.hpp"
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj::test;
using namespace kj::test::db;
namespace kdb = kj::db;

namespace {

struct agent_fixture {
  scratch_dir dir;
  kdb::store store = kdb::store::open(dir / "kj.sqlite");
  std::int64_t stack = store.upsert_stack(make_stack());
  std::int64_t run = store.create_run(make_run("agent-run", stack));
  std::int64_t problem = store.upsert_problem(make_problem(1, 2));
  std::int64_t candidate = store.upsert_candidate(make_candidate(problem, 0));
};

kdb::trajectory_record make_trajectory(const agent_fixture& f) {
  kdb::trajectory_record t;
  t.run_id = f.run;
  t.problem_id = f.problem;
  t.attempt = 0;
  t.producer = "agent/openai/test-model";
  t.adapter = "openai";
  t.model = "test-model";
  t.prompt_hash = "abc";
  t.system_prompt = "skill";
  t.task_prompt = "task";
  t.settings_json = "{}";
  t.workspace = "/tmp/ws";
  t.speedup_baseline = "eager";
  return t;
}

} // namespace

TEST_CASE("a trajectory, its turns and tool calls round-trip, reports read results only") {
  agent_fixture f;
  kdb::trajectory_record t = make_trajectory(f);
  t.id = f.store.insert_trajectory(t);
  CHECK_FALSE(f.store.finished_trajectory(f.run, f.problem, 0)); // still running

  // The same version verified and profiled in the loop (any number of agent_loop rows), then re-measured (one
  // result per run and candidate, as for kj run).
  kdb::evaluation_record loop = make_evaluation(f.run, f.problem, f.candidate, f.stack);
  loop.purpose = "agent_loop";
  const std::int64_t in_loop = f.store.insert_evaluation(loop);
  const std::int64_t profiled = f.store.insert_evaluation(loop);
  CHECK(profiled != in_loop);
  CHECK_FALSE(f.store.has_evaluation(f.run, f.candidate)); // kj run's resume looks at results only
  const std::int64_t remeasured =
      f.store.insert_evaluation(make_evaluation(f.run, f.problem, f.candidate, f.stack));
  CHECK(f.store.has_evaluation(f.run, f.candidate));
  CHECK_THROWS_AS(f.store.insert_evaluation(make_evaluation(f.run, f.problem, f.candidate, f.stack)),
                  kdb::db_error);
  CHECK(f.store.get_evaluation(in_loop)->purpose == "agent_loop");
  CHECK(f.store.get_evaluation(remeasured)->purpose == "result");
  kdb::turn_record turn{.trajectory_id = t.id,
                        .turn = 1,
                        .user_note = "",
                        .context_note = "context ~9 tokens",
                        .context_tokens = 9,
                        .text = "verifying",
                        .thinking = "hmm",
                        .stop_reason = "tool_use",
                        .input_tokens = 100,
                        .output_tokens = 20,
                        .cost_usd = 0.5,
                        .latency_ms = 12};
  f.store.insert_turn(turn, {{.seq = 0,
                              .call_id = "c0",
                              .tool = "write_file",
                              .arguments_json = "{}",
                              .result = "write_file model_new.py: wrote 10 bytes\n",
                              .summary = "write_file model_new.py: wrote 10 bytes"},
                             {.seq = 1,
                              .call_id = "c1",
                              .tool = "verify",
                              .arguments_json = "{}",
                              .result = "verify ab: ok\nmore",
                              .summary = "verify ab: ok",
                              .candidate_id = f.candidate,
                              .evaluation_id = in_loop,
                              .seconds = 4.5}});
  t.status = "submitted";
  t.turns = 1;
  t.input_tokens = 100;
  t.cost_usd = 0.5;
  t.selected_candidate_id = t.final_candidate_id = f.candidate;
  t.selected_evaluation_id = t.final_evaluation_id = in_loop;
  t.result_evaluation_id = remeasured;
  t.inloop_speedup = 2.0;
  t.remeasured_speedup = 1.6;
  f.store.update_trajectory(t);

  CHECK(f.store.finished_trajectory(f.run, f.problem, 0) == t.id);
  CHECK_FALSE(f.store.finished_trajectory(f.run, f.problem, 1));
  const auto transcript = f.store.get_transcript(t.id);
  REQUIRE(transcript);
  CHECK(transcript->trajectory.status == "submitted");
  CHECK(transcript->trajectory.result_evaluation_id == remeasured);
  CHECK(*transcript->trajectory.inflation() == Approx(1.25));
  REQUIRE(transcript->turns.size() == 1);
  CHECK((transcript->turns[0].thinking == "hmm" && *transcript->turns[0].cost_usd == 0.5));
  REQUIRE(transcript->calls[0].size() == 2);
  CHECK(transcript->calls[0][1].evaluation_id == in_loop);
  CHECK(transcript->calls[0][1].seconds == 4.5);
  CHECK(f.store.tool_call_of_evaluation(in_loop)->tool == "verify");
  CHECK_FALSE(f.store.tool_call_of_evaluation(remeasured));
  CHECK(f.store.trajectories("agent-run").size() == 1);
  CHECK(f.store.get_problem(f.problem)->file_name == "2_Problem_2.py");
  CHECK(f.store.get_candidate(f.candidate)->producer == "directory");

  // Reports read results only: the re-measurement, not the in-loop evaluations, with the trajectory's usage.
  const auto rows = f.store.evaluation_rows({.run_uid = "agent-run"});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].evaluation_id == remeasured);
  CHECK(rows[0].input_tokens == 100);
  CHECK(rows[0].cost_usd == 0.5);
  CHECK(f.store.runs().back().evaluations == 1);
  CHECK(count_rows(f.dir / "kj.sqlite", "agent_tool_calls") == 2);
}

TEST_CASE(
    "an interrupted trajectory does not count as finished, a restart is a new row of the same attempt") {
  agent_fixture f;
  kdb::trajectory_record t = make_trajectory(f);
  t.id = f.store.insert_trajectory(t);
  t.status = "interrupted";
  f.store.update_trajectory(t);
  CHECK_FALSE(f.store.finished_trajectory(f.run, f.problem, 0));
  kdb::trajectory_record again = make_trajectory(f);
  again.id = f.store.insert_trajectory(again);
  again.status = "turn_limit";
  f.store.update_trajectory(again);
  CHECK(f.store.finished_trajectory(f.run, f.problem, 0) == again.id);
  CHECK(f.store.trajectories("agent-run").size() == 2);
  kdb::trajectory_record missing = make_trajectory(f);
  missing.id = 999;
  CHECK(contains(db_error_of([&] { f.store.update_trajectory(missing); }), "no such trajectory"));
}

TEST_CASE("migrating a version 6 database to 7 rebuilds evaluations and keeps every row and child") {
  scratch_dir dir;
  const auto path = dir / "kj.sqlite";
  {
    auto db = kdb::sqlite::connection::open(path, kdb::sqlite::connection::open_mode::read_write_create);
    db.exec("PRAGMA foreign_keys = ON", "as store::open has it");
    const auto all = kdb::migrations();
    kdb::migrate(db, {all.begin(), all.begin() + 6});
    db.exec(R"sql(
INSERT INTO stacks VALUES (1, 'h', '3.11', '2.13', 'cpu', '{}', 't');
INSERT INTO runs VALUES (1, 'old', 't', 'finished', 'cpu', 'kj run', '0', '{}', 1);
INSERT INTO problems VALUES (1, 'kernelbench', 'main', 1, 1, 'A', '1_A.py', 'p', 's', 'ph', '', 't');
INSERT INTO candidates VALUES (1, 1, 'directory', 0, 'c', 's', 'ch', 't');
INSERT INTO evaluations (id, run_id, problem_id, candidate_id, stack_id, device, overrides_json, protocol, verdict,
                         error, started_at, finished_at, duration_s, strict_verdict, build_key)
  VALUES (7, 1, 1, 1, 1, 'cpu', '{}', 'kernelbench-main', 'correct', '', 't', 't', 1.5, 'pass', 'bk');
INSERT INTO trials VALUES (1, 7, 0, 42, 1, 0, 0, 0, '{}');
INSERT INTO timings VALUES (1, 7, 'candidate', 'robust', 'host', '{}', 1, 1, 1, 1, 0);
INSERT INTO timing_samples VALUES (1, 0, 1.0);
)sql",
            "a version 5 database with one evaluation");
    kdb::migrate(db);
    CHECK(db.query_int64("PRAGMA foreign_keys", "foreign keys back on") == 1);
  }
  auto s = kdb::store::open(path);
  CHECK(s.user_version() == kdb::schema_version);
  const auto e = s.get_evaluation(7);
  REQUIRE(e);
  CHECK((e->verdict == kj::verdict::correct && e->strict_verdict == kj::strict_verdict::pass &&
         e->build_key == "bk"));
  CHECK(e->purpose == "result");
  CHECK(e->trials.size() == 1); // not cascaded away with the old table
  REQUIRE(e->timings.size() == 1);
  CHECK(e->timings[0].samples_ms.size() == 1);
  CHECK(s.has_evaluation(1, 1));
}

TEST_CASE("a row read by column name reads what the SELECT named, and an absent name is refused by name") {
  scratch_dir dir;
  auto db = kdb::sqlite::connection::open(dir / "named.sqlite",
                                          kdb::sqlite::connection::open_mode::read_write_create);
  db.exec("CREATE TABLE t (id INTEGER, label TEXT, score REAL); INSERT INTO t VALUES (7, 'seven', NULL)",
          "setup");
  auto row = db.prepare("SELECT score, label, id FROM t", "read t");
  REQUIRE(row.step());
  CHECK(row.int64("id") == 7);
  CHECK(row.text("label") == "seven");
  CHECK_FALSE(row.optional_real("score").has_value());
  try {
    (void)row.text("name");
    FAIL("an absent column was read");
  } catch (const kdb::db_error& e) {
    CHECK(std::string(e.what()).find("no column named 'name'") != std::string::npos);
    CHECK(std::string(e.what()).find("read t") != std::string::npos);
  }
}
