// Schema v3: baselines are stored with their samples, looked up by cache key (newest first), listed per
// stack with the imported rows, and an evaluation's linked baselines are read back as stored.
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <tuple>

using namespace kj::test::db;
using kj::db::baseline_record;

namespace {

// populated_store (a stack and run "r-test-1") with one problem and candidate, for evaluations to go into.
struct evaluation_fixture : populated_store {
  std::int64_t problem = db.upsert_problem(make_problem(1, 1));
  std::int64_t candidate = db.upsert_candidate(make_candidate(problem, 0));
};

} // namespace

TEST_CASE("a baseline is stored with its samples and found by its cache key, newest first") {
  kj::test::scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto stack = store.upsert_stack(make_stack());
  const auto problem = store.upsert_problem(make_problem(1, 1));

  CHECK_FALSE(store.find_baseline("k1").has_value());
  const auto first = store.insert_baseline(make_baseline("k1", "compile-default", 2.0, problem, stack));
  const auto second = store.insert_baseline(make_baseline("k1", "compile-default", 1.5, problem, stack));
  CHECK(second > first);
  CHECK(count_rows(dir / "kj.sqlite", "baseline_samples") == 6);

  const auto found = store.find_baseline("k1");
  REQUIRE(found);
  CHECK(found->id == second); // a refresh keeps the old row and the newer one answers
  CHECK(found->median_ms == 1.5);
  CHECK(found->compile_s == 12.5);
  CHECK(found->stack_id == stack);
  CHECK(found->problem_id == problem);
  CHECK(found->headline_ms() == 1.5);
  CHECK_FALSE(found->warm_compile_s.has_value());
}

TEST_CASE("the headline of a baseline follows its method, and imported rows use the mean") {
  baseline_record b = make_baseline("k", "eager", 2.0, 0, 0);
  b.mean_ms = 3.0;
  CHECK(b.headline_ms() == 2.0);
  b.params_json = R"({"headline":"mean"})";
  CHECK(b.headline_ms() == 3.0);
  b.params_json = "{}";
  b.origin = "imported";
  CHECK(b.headline_ms() == 3.0);
}

TEST_CASE("an unknown origin is refused, naming the field") {
  kj::test::scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  baseline_record b = make_baseline("k", "eager", 1.0, 0, 0);
  b.origin = "guessed";
  CHECK(contains(db_error_of([&] { store.insert_baseline(b); }), "origin is 'guessed'"));
  CHECK(count_rows(dir / "kj.sqlite", "baselines") == 0);
}

TEST_CASE("baselines() lists one stack's measured rows and every imported row") {
  kj::test::scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto a = store.upsert_stack(make_stack("stack-a"));
  const auto b = store.upsert_stack(make_stack("stack-b"));
  store.insert_baseline(make_baseline("ka", "eager", 1.0, 0, a));
  store.insert_baseline(make_baseline("kb", "eager", 1.0, 0, b));
  baseline_record imported = make_baseline("imported:x", "eager", 1.0, 0, 0);
  imported.origin = "imported";
  store.insert_baseline(imported);
  CHECK(store.baselines(a).size() == 2);
  CHECK(store.baselines(b).size() == 2);
  CHECK(store.baselines().size() == 3);
}

TEST_CASE("evaluation_rows reads an evaluation's linked baselines as stored, whatever their status") {
  evaluation_fixture f;
  auto [store, stack, problem, candidate, run] = std::tie(f.db, f.stack_id, f.problem, f.candidate, f.run_id);

  const auto compiled = store.insert_baseline(make_baseline("kc", "compile-default", 1.0, problem, stack));
  baseline_record failed = make_baseline("kf", "max-autotune-no-cudagraphs", 0.1, problem, stack);
  failed.status = "compile_error";
  const auto failed_id = store.insert_baseline(failed);
  baseline_record imported = make_baseline("imported:x", "compile-default", 4.0, 0, 0);
  imported.origin = "imported";
  imported.samples_ms.clear();
  const auto imported_id = store.insert_baseline(imported);

  auto e = make_evaluation(run, problem, candidate, stack);
  e.timings = {make_timing("candidate", 0.5), make_timing("reference_eager", 2.0)};
  e.baseline_ids = {compiled, failed_id, imported_id};
  const auto id = store.insert_evaluation(e);
  CHECK(count_rows(f.path, "evaluation_baselines") == 3);
  CHECK(store.get_evaluation(id)->baseline_ids ==
        std::vector<std::int64_t>{compiled, failed_id, imported_id});

  kj::db::evaluation_filter filter;
  filter.run_uid = "r-test-1";
  const auto rows = store.evaluation_rows(filter);
  REQUIRE(rows.size() == 1);
  REQUIRE(rows[0].baselines.size() == 3);
  const auto& c = rows[0].baselines[0];
  CHECK(c.id == compiled);
  CHECK(c.mode == "compile-default");
  CHECK(c.status == "ok");
  CHECK(c.origin == "measured");
  CHECK(c.method == "host-median");
  CHECK(c.stack_id == stack);
  CHECK(c.median_ms == 1.0);
  CHECK(c.samples_ms == std::vector<double>{1.1, 1.0, 0.9});
  CHECK(rows[0].baselines[1].status == "compile_error");
  CHECK(rows[0].baselines[2].origin == "imported");
  CHECK(rows[0].baselines[2].stack_id == 0);
  CHECK(rows[0].baselines[2].samples_ms.empty());

  filter.samples = false; // the same rows without their samples
  const auto light = store.evaluation_rows(filter);
  CHECK(light[0].baselines[0].samples_ms.empty());
  CHECK(light[0].timings[0].samples_ms.empty());
}

TEST_CASE("find_problem returns the newest problem with that level and file name") {
  kj::test::scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  CHECK_FALSE(store.find_problem(1, "1_Problem_1.py").has_value());
  store.upsert_problem(make_problem(1, 1, "class Model: pass"));
  const auto newer = store.upsert_problem(make_problem(1, 1, "class Model: pass  # edited"));
  CHECK(store.find_problem(1, "1_Problem_1.py") == newer);
  CHECK_FALSE(store.find_problem(2, "1_Problem_1.py").has_value());
}

TEST_CASE("a precision name kj never writes is refused where it is read, naming the row and the name") {
  evaluation_fixture f;
  const auto id = f.db.insert_baseline(make_baseline("kp", "eager", 1.0, f.problem, f.stack_id));
  const auto evaluation =
      f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id));
  {
    auto raw =
        kj::db::sqlite::connection::open(f.path, kj::db::sqlite::connection::open_mode::read_write_create);
    raw.exec("UPDATE baselines SET precision = 'fp8'", "a DB another tool wrote into");
    raw.exec("UPDATE runs SET config_json = json_set(config_json, '$.precision', 'fp4')", "likewise");
  }
  const std::string baselines = db_error_of([&] { (void)f.db.baselines(); });
  CHECK(contains(baselines, "baseline " + std::to_string(id)));
  CHECK(contains(baselines, "unknown precision 'fp8'"));
  const std::string rows = db_error_of([&] { (void)f.db.evaluation_rows({}); });
  CHECK(contains(rows, "evaluation " + std::to_string(evaluation)));
  CHECK(contains(rows, "unknown precision 'fp4'"));
}

TEST_CASE("a run that predates the precision in its options computed at its protocol's") {
  evaluation_fixture f;
  auto e = make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id);
  e.protocol = "kernelbench-main-bf16";
  f.db.insert_evaluation(e);
  {
    auto raw =
        kj::db::sqlite::connection::open(f.path, kj::db::sqlite::connection::open_mode::read_write_create);
    raw.exec("UPDATE runs SET config_json = json_remove(config_json, '$.precision')", "an older kj's run");
  }
  const auto rows = f.db.evaluation_rows({});
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].precision == kj::precision::bf16);
}
