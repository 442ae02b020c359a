// Schema v3: baselines are stored with their samples, looked up by cache key (newest first), listed per
// stack with the imported rows, and an evaluation's linked baselines give speedups and the best baseline.
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <tuple>

using namespace kj::test::db;
using kj::db::baseline_record;

namespace {

baseline_record make_baseline(const std::string& key, const std::string& mode, double median_ms,
                              std::int64_t problem_id, std::int64_t stack_id) {
  baseline_record b;
  b.cache_key = key;
  b.key_json = R"({"mode":")" + mode + R"("})";
  b.problem_id = problem_id;
  b.stack_id = stack_id;
  b.level = 1;
  b.file_name = "1_Problem_1.py";
  b.mode = mode;
  b.device = "cuda";
  b.precision = "fp32";
  b.method = "host-median";
  b.clock = "host";
  b.params_json = R"({"headline":"median"})";
  b.samples_ms = {median_ms * 1.1, median_ms, median_ms * 0.9};
  b.median_ms = median_ms;
  b.mean_ms = median_ms;
  b.min_ms = median_ms * 0.9;
  b.max_ms = median_ms * 1.1;
  b.stdev_ms = median_ms * 0.1;
  b.compile_s = 12.5;
  b.hardware = "NVIDIA H100 80GB HBM3";
  return b;
}

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

TEST_CASE("results report speedups against the paired eager reference and each linked baseline") {
  evaluation_fixture f;
  auto [store, stack, problem, candidate, run] = std::tie(f.db, f.stack_id, f.problem, f.candidate, f.run_id);

  const auto compiled = store.insert_baseline(make_baseline("kc", "compile-default", 1.0, problem, stack));
  const auto autotuned = store.insert_baseline(make_baseline("km", "max-autotune", 3.0, problem, stack));
  baseline_record failed = make_baseline("kf", "max-autotune-no-cudagraphs", 0.1, problem, stack);
  failed.status = "compile_error"; // not a baseline to compare with, however fast it looks
  const auto failed_id = store.insert_baseline(failed);
  baseline_record other_method = make_baseline("ko", "reduce-overhead", 0.2, problem, stack);
  other_method.method = "kernelbench"; // measured another way than the candidate: not comparable
  const auto other_id = store.insert_baseline(other_method);

  auto e = make_evaluation(run, problem, candidate, stack);
  e.timings = {make_timing("candidate", 0.5), make_timing("reference_eager", 2.0)};
  e.baseline_ids = {compiled, autotuned, failed_id, other_id};
  const auto id = store.insert_evaluation(e);
  CHECK(count_rows(f.path, "evaluation_baselines") == 4);
  CHECK(store.get_evaluation(id)->baseline_ids ==
        std::vector<std::int64_t>{compiled, autotuned, failed_id, other_id}); // ascending: inserted in order

  const auto rows = store.results("r-test-1");
  REQUIRE(rows.size() == 1);
  const auto& row = rows[0];
  REQUIRE(row.baseline_ms.size() == 3);
  CHECK(row.speedup_vs("eager") == 4.0);
  CHECK(row.speedup_vs("compile-default") == 2.0);
  CHECK(row.speedup_vs("max-autotune").value() == Approx(6.0));
  CHECK_FALSE(row.speedup_vs("max-autotune-no-cudagraphs").has_value());
  CHECK_FALSE(row.speedup_vs("reduce-overhead").has_value());
  CHECK(row.best_baseline == "compile-default");
  CHECK(row.speedup_best == 2.0);
}

TEST_CASE("without linked baselines the best baseline is the paired eager reference") {
  evaluation_fixture f;
  auto [store, stack, problem, candidate, run] = std::tie(f.db, f.stack_id, f.problem, f.candidate, f.run_id);
  auto e = make_evaluation(run, problem, candidate, stack);
  e.timings = {make_timing("candidate", 1.0), make_timing("reference_eager", 1.5)};
  store.insert_evaluation(e);
  const auto rows = store.results("r-test-1");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].best_baseline == "eager");
  CHECK(rows[0].speedup_best == 1.5);
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
