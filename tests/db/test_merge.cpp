// kj merge at the DB level: two shard databases of one run (on two stacks) merged into a third that already
// holds other rows: every row arrives once with ids mapped, merging again adds nothing, a run's parts and
// status follow its shards, and mismatched or foreign files are refused by name.
#include "db/merge.hpp"
#include "db/migrations.hpp"
#include "db/sqlite.hpp"
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <algorithm>
#include <map>
#include <set>

using namespace kj::test;
using namespace kj::test::db;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> counted{"stacks",
                                       "problems",
                                       "candidates",
                                       "runs",
                                       "evaluations",
                                       "trials",
                                       "timings",
                                       "timing_samples",
                                       "verification_cases",
                                       "evaluation_memory",
                                       "evaluation_phases",
                                       "static_findings",
                                       "builds",
                                       "baselines",
                                       "baseline_samples",
                                       "evaluation_baselines",
                                       "llm_exchanges",
                                       "candidate_origins",
                                       "llm_generations",
                                       "run_parts",
                                       "agent_trajectories",
                                       "agent_turns",
                                       "agent_tool_calls",
                                       "problem_audits"};

std::map<std::string, std::int64_t> counts(const fs::path& path) {
  std::map<std::string, std::int64_t> out;
  for (const auto& table : counted)
    out[table] = count_rows(path, table);
  return out;
}

// Writes what `kj run --shard <shard>` of run "r-shards" would on its stack: problems first..last (level 1),
// one candidate each, judged with every kind of child row, a build, a linked baseline, an LLM exchange.
void fill_shard(const fs::path& path, const std::string& shard, const std::string& stack_hash, int first,
                int last, const std::string& status, const std::string& more_config = "") {
  auto s = kj::db::store::open(path);
  const auto stack = s.upsert_stack(make_stack(stack_hash));
  kj::db::run_record run = make_run("r-shards", stack);
  run.status = status;
  run.config_json = R"({"shard":")" + shard + "\"" + more_config + "}";
  run.created_at = "2026-01-01T00:00:0" + shard.substr(0, 1) + ".000Z";
  const auto run_id = s.create_run(run);
  kj::db::llm_exchange_record x;
  x.run_id = run_id, x.provider = "openai", x.model = "m", x.request_hash = "h-" + shard, x.attempts = 1;
  x.started_at = run.created_at;
  const auto exchange = s.insert_llm_exchange(x);
  s.upsert_llm_generation({run_id, "openai", "m", 0, R"({"samples":1})"});
  for (int n = first; n <= last; ++n) {
    const auto problem = s.upsert_problem(make_problem(1, n));
    const auto candidate =
        s.upsert_candidate(make_candidate(problem, 0, shard + " candidate " + std::to_string(n)));
    s.upsert_candidate_origin({candidate, run_id, exchange, "openai", "m", "p", 0, "req", "code", ""});
    s.upsert_build({candidate, "build-" + std::to_string(n), "cpu", "ok", 1.5, "log", ""});
    s.insert_problem_audit({.problem_id = problem,
                            .stack_id = stack,
                            .device = "cpu",
                            .protocol = "kernelbench-main",
                            .created_at = run.created_at,
                            .unsound = n == 2,
                            .reasons = n == 2 ? "constant reference" : "",
                            .nulls_json = R"({"zeros": {"compatible": true, "strict": null}})"});
    kj::db::baseline_record b;
    b.cache_key = stack_hash + "-baseline-" + std::to_string(n);
    b.problem_id = problem, b.stack_id = stack, b.level = 1, b.mode = "compile-default";
    b.file_name = make_problem(1, n).file_name, b.samples_ms = {1.0, 2.0, 3.0}, b.median_ms = 2.0;
    b.created_at = run.created_at;
    auto e = make_evaluation(run_id, problem, candidate, stack);
    e.timings = {make_timing("candidate", 1.0 * n), make_timing("reference_eager", 2.0 * n)};
    e.cases = {{"nan", 0, 7, "pass", "fp32", 0, 0, 0, 0, -1, ""},
               {"inf", 0, 8, "fail", "fp32", 1, 1, 3, 2, 5, "m"}};
    e.findings = {{"torch_fallback", n, "torch.matmul"}};
    e.baseline_ids = {s.insert_baseline(b)};
    e.build_key = "build-" + std::to_string(n);
    s.insert_evaluation(e);
  }
}

struct shards {
  scratch_dir dir;
  fs::path a = dir / "shard-1.sqlite", b = dir / "shard-2.sqlite", out = dir / "all.sqlite";
  shards() {
    fill_shard(a, "1/2", "stack-a", 1, 3, "finished");
    fill_shard(b, "2/2", "stack-b", 3, 5, "running"); // problem 3 is in both; shard 2 was killed
    // The output already holds another run, so that merged rows get ids of their own.
    auto out_store = kj::db::store::open(out);
    const auto stack = out_store.upsert_stack(make_stack("stack-z"));
    const auto run = out_store.create_run(make_run("r-other", stack));
    const auto problem = out_store.upsert_problem(make_problem(2, 9));
    const auto candidate = out_store.upsert_candidate(make_candidate(problem, 0));
    out_store.insert_evaluation(make_evaluation(run, problem, candidate, stack));
  }
};

// An evaluation as content: its ids replaced by what they name.
struct evaluation_content {
  std::string stack_hash, file_name, candidate_source, verdict, build_key;
  std::vector<std::string> baseline_keys;
  kj::db::evaluation_record record;
};

std::vector<evaluation_content> evaluations_of(const fs::path& path, const std::string& run_uid) {
  const auto s = kj::db::store::open_read_only(path);
  auto raw = kj::db::sqlite::connection::open(path, kj::db::sqlite::connection::open_mode::read_only);
  auto ids =
      raw.prepare("SELECT e.id, st.stack_hash, p.file_name, c.source FROM evaluations e JOIN runs r ON "
                  "r.id = e.run_id JOIN stacks st ON st.id = e.stack_id JOIN problems p ON p.id = "
                  "e.problem_id JOIN candidates c ON c.id = e.candidate_id WHERE r.run_uid = ? ORDER BY "
                  "c.source",
                  "list evaluations");
  ids.bind_all(run_uid);
  std::vector<evaluation_content> out;
  while (ids.step()) {
    evaluation_content e{ids.column_text(1),
                         ids.column_text(2),
                         ids.column_text(3),
                         "",
                         "",
                         {},
                         *s.get_evaluation(ids.column_int64(0))};
    e.verdict = e.record.verdict, e.build_key = e.record.build_key;
    for (const auto id : e.record.baseline_ids) {
      auto key = raw.prepare("SELECT cache_key FROM baselines WHERE id = ?", "baseline key");
      key.bind_all(id);
      REQUIRE(key.step());
      e.baseline_keys.push_back(key.column_text(0));
    }
    out.push_back(std::move(e));
  }
  return out;
}

void check_same(const evaluation_content& merged, const evaluation_content& source) {
  INFO(source.candidate_source);
  CHECK(merged.stack_hash == source.stack_hash);
  CHECK(merged.file_name == source.file_name);
  CHECK(merged.verdict == source.verdict);
  CHECK(merged.build_key == source.build_key);
  CHECK(merged.baseline_keys == source.baseline_keys);
  const auto &m = merged.record, &s = source.record;
  REQUIRE(m.trials.size() == s.trials.size());
  for (std::size_t i = 0; i < s.trials.size(); ++i)
    CHECK((m.trials[i].seed == s.trials[i].seed && m.trials[i].detail_json == s.trials[i].detail_json));
  REQUIRE(m.timings.size() == s.timings.size());
  for (std::size_t i = 0; i < s.timings.size(); ++i) {
    CHECK(m.timings[i].subject == s.timings[i].subject);
    CHECK(m.timings[i].samples_ms == s.timings[i].samples_ms);
  }
  REQUIRE(m.cases.size() == s.cases.size());
  for (std::size_t i = 0; i < s.cases.size(); ++i)
    CHECK((m.cases[i].case_class == s.cases[i].case_class && m.cases[i].status == s.cases[i].status));
  REQUIRE(m.findings.size() == 1);
  CHECK(m.findings[0].line == s.findings[0].line);
}

} // namespace

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

TEST_CASE("merge refuses a source at another schema version, a foreign file, a missing one and itself") {
  shards f;
  const fs::path old = f.dir / "old.sqlite";
  {
    auto raw =
        kj::db::sqlite::connection::open(old, kj::db::sqlite::connection::open_mode::read_write_create);
    kj::db::migrate(raw, kj::db::migrations().first(5));
  }
  const std::string error = db_error_of([&] { kj::db::merge_database(f.out, old); });
  CHECK(contains(error, old.string()));
  CHECK(contains(error, "schema version is 5"));
  CHECK(contains(error, "has " + std::to_string(kj::db::schema_version)));
  CHECK(contains(error, "kj db migrate"));

  const fs::path text = f.dir / "notes.sqlite";
  write_file(text, "these are not the rows you are looking for\n");
  CHECK(contains(db_error_of([&] { kj::db::merge_database(f.out, text); }), text.string()));
  CHECK(
      contains(db_error_of([&] { kj::db::merge_database(f.out, f.dir / "absent.sqlite"); }), "no such file"));
  CHECK(contains(db_error_of([&] { kj::db::merge_database(f.out, f.out); }), "into itself"));
  CHECK(count_rows(f.out, "runs") == 1); // nothing was merged by the refused ones
}

TEST_CASE("merge refuses a shard judged with other options, and another run under a shard already merged") {
  scratch_dir dir;
  const fs::path a = dir / "a.sqlite", sized = dir / "sized.sqlite", again = dir / "again.sqlite",
                 out = dir / "out.sqlite";
  fill_shard(a, "1/2", "stack-a", 1, 2, "finished", R"(,"overrides":{},"gpus":[0])");
  // Another machine (other GPUs) is fine; other sizes are another run.
  fill_shard(sized, "2/2", "stack-a", 3, 4, "finished", R"(,"overrides":{"dim":64},"gpus":[1])");
  kj::db::merge_database(out, a);
  std::string refused;
  try {
    kj::db::merge_database(out, sized);
  } catch (const kj::db::db_error& e) {
    refused = e.what();
  }
  CHECK(refused.find("judged with other overrides than run r-shards here") != std::string::npos);
  fill_shard(again, "1/2", "stack-a", 1, 2, "finished", R"(,"overrides":{})");
  kj::db::sqlite::connection::open(again, kj::db::sqlite::connection::open_mode::read_write_create)
      .exec("UPDATE runs SET created_at = '2026-02-02T00:00:00.000Z'", "another start");
  refused.clear();
  try {
    kj::db::merge_database(out, again);
  } catch (const kj::db::db_error& e) {
    refused = e.what();
  }
  CHECK(refused.find("shard 1/2 of run r-shards is already merged") != std::string::npos);
  CHECK_NOTHROW(kj::db::merge_database(out, a)); // the same part again: nothing new, no refusal
}

TEST_CASE("merge knows every table of the schema") {
  scratch_dir dir;
  {
    auto s = kj::db::store::open(dir / "kj.sqlite");
  }
  auto raw =
      kj::db::sqlite::connection::open(dir / "kj.sqlite", kj::db::sqlite::connection::open_mode::read_only);
  auto tables =
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                  "AND name <> 'schema_migrations'",
                  "list tables");
  std::set<std::string> schema;
  while (tables.step())
    schema.insert(tables.column_text(0));
  const auto& merged = kj::db::merged_tables();
  // A migration that adds a table must teach db/merge.cpp to copy it (and add it to `counted` above).
  CHECK(schema == std::set<std::string>(merged.begin(), merged.end()));
  CHECK(std::set<std::string>(counted.begin(), counted.end()) == schema);
}

TEST_CASE("merge refuses to copy a reference it does not map") {
  shards f;
  { // what a migration that forgot db/merge.cpp would leave: a new column naming another table's ids
    auto raw =
        kj::db::sqlite::connection::open(f.out, kj::db::sqlite::connection::open_mode::read_write_create);
    raw.exec("ALTER TABLE evaluations ADD COLUMN baseline_run INTEGER REFERENCES runs(id)", "add a column");
  }
  const std::string error = db_error_of([&] { kj::db::merge_database(f.out, f.a); });
  CHECK(contains(error, "does not map evaluations.baseline_run (a reference to runs)"));
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
