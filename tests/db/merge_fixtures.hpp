// Fixtures of the kj merge tests (test_merge.cpp, test_merge_refusals.cpp): shard databases of one run filled
// with rows of every table, their row counts and their evaluations' content.
#pragma once

#include "db/merge.hpp"
#include "db/migrations.hpp"
#include "db/sqlite.hpp"
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace kj::test::merge {

namespace fs = std::filesystem;
using namespace kj::test::db;

inline const std::vector<std::string> counted{"stacks",
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
                                              "llm_batches",
                                              "run_parts",
                                              "agent_trajectories",
                                              "agent_turns",
                                              "agent_tool_calls",
                                              "problem_audits"};

inline std::map<std::string, std::int64_t> counts(const fs::path& path) {
  std::map<std::string, std::int64_t> out;
  for (const auto& table : counted)
    out[table] = count_rows(path, table);
  return out;
}

// Writes what `kj run --shard <shard>` of run "r-shards" would on its stack: problems first..last (level 1),
// one candidate each, judged with every kind of child row, a build, a linked baseline, an LLM exchange.
inline void fill_shard(const fs::path& path, const std::string& shard, const std::string& stack_hash,
                       int first, int last, const std::string& status, const std::string& more_config = "") {
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
    e.cases = {{"nan", 0, 7, kj::case_status::pass, "fp32", 0, 0, 0, 0, -1, ""},
               {"inf", 0, 8, kj::case_status::fail, "fp32", 1, 1, 3, 2, 5, "m"}};
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

inline std::vector<evaluation_content> evaluations_of(const fs::path& path, const std::string& run_uid) {
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
    e.verdict = kj::name_of(e.record.verdict), e.build_key = e.record.build_key;
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

inline void check_same(const evaluation_content& merged, const evaluation_content& source) {
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

} // namespace kj::test::merge
