// Derived metrics (reports/metrics.hpp): which timings pair up, speedups against each baseline and the best,
// trace shares, and the intervals, from rows written through db::store.
#include "reports/metrics.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <tuple>

using namespace kj::test::db;
using kj::db::baseline_record;

namespace {

struct evaluation_fixture : populated_store {
  std::int64_t problem = db.upsert_problem(make_problem(1, 1));
  std::int64_t candidate = db.upsert_candidate(make_candidate(problem, 0));
};

} // namespace

TEST_CASE("speedups against the paired eager reference and each linked baseline measured the same way") {
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
  store.insert_evaluation(e);

  const auto rows = kj::reports::results(store, "r-test-1");
  REQUIRE(rows.size() == 1);
  const auto& row = rows[0];
  REQUIRE(row.baselines.size() == 3);
  CHECK(row.baselines[0].mode == "eager");
  CHECK(row.speedup_vs("eager") == 4.0);
  CHECK(row.speedup_vs("compile-default") == 2.0);
  CHECK(row.speedup_vs("max-autotune").value() == Approx(6.0));
  CHECK_FALSE(row.speedup_vs("max-autotune-no-cudagraphs").has_value());
  CHECK_FALSE(row.speedup_vs("reduce-overhead").has_value());
  CHECK(row.best_baseline == "compile-default");
  CHECK(row.speedup_best == 2.0);
  CHECK(row.speedup_vs("best") == 2.0);
  // Provenance: each speedup names the DB row of its baseline.
  CHECK(row.baseline("compile-default")->baseline.table == "baselines");
  CHECK(row.baseline("compile-default")->baseline.row_id == compiled);
  CHECK(row.baseline("eager")->baseline.table == "timings");
  CHECK(row.dtype == kj::precision::fp32);
  CHECK(row.stack_hash == "stack-a");
}

TEST_CASE("without linked baselines the best baseline is the paired eager reference") {
  evaluation_fixture f;
  auto e = make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id);
  e.timings = {make_timing("candidate", 1.0), make_timing("reference_eager", 1.5)};
  f.db.insert_evaluation(e);
  const auto rows = kj::reports::results(f.db, "r-test-1");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].best_baseline == "eager");
  CHECK(rows[0].speedup_best == 1.5);
}

TEST_CASE("a speedup needs both timings, measured with the same method and clock") {
  populated_store s;
  const auto p = s.db.upsert_problem(make_problem(1, 3));
  const auto c0 = s.db.upsert_candidate(make_candidate(p, 0));
  const auto c1 = s.db.upsert_candidate(make_candidate(p, 1));
  const auto c2 = s.db.upsert_candidate(make_candidate(p, 2));
  auto mixed = make_evaluation(s.run_id, p, c0, s.stack_id);
  mixed.timings = {make_timing("candidate", 1.0, "robust"), make_timing("reference_eager", 2.0)};
  s.db.insert_evaluation(mixed);
  auto failed = make_evaluation(s.run_id, p, c1, s.stack_id);
  failed.verdict = kj::verdict::incorrect;
  failed.timings = {make_timing("reference_eager", 2.0)};
  s.db.insert_evaluation(failed);
  auto both = make_evaluation(s.run_id, p, c2, s.stack_id); // a same-way reference is preferred
  both.timings = {make_timing("candidate", 1.0, "robust"), make_timing("reference_eager", 5.0),
                  make_timing("reference_eager", 3.0, "robust")};
  s.db.insert_evaluation(both);

  const auto rows = kj::reports::results(s.db, "r-test-1");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].candidate_median_ms == 1.0);
  CHECK(rows[0].reference_median_ms == 2.0);
  CHECK_FALSE(rows[0].speedup.has_value());
  CHECK(rows[0].baselines.empty());
  CHECK_FALSE(rows[1].candidate_median_ms.has_value());
  CHECK_FALSE(rows[1].speedup.has_value());
  CHECK_FALSE(rows[1].counted_correct());
  CHECK(rows[2].speedup == Approx(3.0));
  CHECK(rows[2].counted_correct());
}

TEST_CASE("intervals: the median's order-statistic interval, and a bootstrap interval of each speedup") {
  evaluation_fixture f;
  auto e = make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id);
  kj::db::timing_record cand = make_timing("candidate", 1.0), ref = make_timing("reference_eager", 2.0);
  cand.samples_ms.clear();
  ref.samples_ms.clear();
  for (int i = 0; i < 41; ++i) { // 0.90 .. 1.10 and 1.80 .. 2.20, medians 1.0 and 2.0
    cand.samples_ms.push_back(0.9 + 0.005 * i);
    ref.samples_ms.push_back(1.8 + 0.01 * i);
  }
  e.timings = {cand, ref};
  e.strict_verdict = kj::strict_verdict::fail;
  f.db.insert_evaluation(e);
  const auto rows = kj::reports::results(f.db, "r-test-1");
  REQUIRE(rows.size() == 1);
  const auto& r = rows[0];
  REQUIRE(r.candidate);
  CHECK(r.candidate->samples_ms.size() == 41);
  // n = 41: ranks 14 and 28 (1-based) bound the 95% interval of the median.
  CHECK(r.candidate->ci_ms.low == Approx(0.9 + 0.005 * 13));
  CHECK(r.candidate->ci_ms.high == Approx(0.9 + 0.005 * 27));
  CHECK(r.candidate->ci_coverage > 0.95);
  REQUIRE(r.speedup_ci.valid());
  CHECK(r.speedup_ci.low < 2.0);
  CHECK(r.speedup_ci.high > 2.0);
  CHECK(r.speedup_ci.low > 1.8);
  CHECK(r.speedup_ci.high < 2.2);
  CHECK_FALSE(r.counted_correct()); // a strict failure is never counted as a speedup
  // The same rows give the same interval (seeded by the evaluation and mode).
  const auto again = kj::reports::results(f.db, "r-test-1");
  CHECK(again[0].speedup_ci.low == r.speedup_ci.low);
  CHECK(again[0].speedup_ci.high == r.speedup_ci.high);
}

TEST_CASE("trace shares come from the candidate timing's params") {
  evaluation_fixture f;
  auto e = make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id);
  auto cand = make_timing("candidate", 2.0);
  cand.params_json = R"({"headline":"median","trace":{"library_share":0.25,"busy_ms_per_call":1.5}})";
  e.timings = {cand};
  f.db.insert_evaluation(e);
  const auto rows = kj::reports::results(f.db, "r-test-1");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].library_share == 0.25);
  CHECK(rows[0].gpu_busy_share == Approx(0.75));
}

TEST_CASE("a candidate that computed at narrower numerics is also compared with the eager baseline at them") {
  evaluation_fixture f;
  auto [store, stack, problem, candidate, run] = std::tie(f.db, f.stack_id, f.problem, f.candidate, f.run_id);
  baseline_record bf16 = make_baseline("kb", "eager", 1.0, problem, stack);
  bf16.precision = kj::precision::bf16;
  baseline_record tf32 = make_baseline("kt", "eager", 1.6, problem, stack);
  tf32.precision = kj::precision::tf32;
  const std::vector<std::int64_t> linked{store.insert_baseline(bf16), store.insert_baseline(tf32)};

  SECTION("a bf16 forward (the judge's numerics): both speedups; the run's eager stays the one counted") {
    auto e = make_evaluation(run, problem, candidate, stack);
    auto timed = make_timing("candidate", 0.5);
    timed.params_json = R"({"numerics": "bf16"})"; // what the judge records (engine/worker)
    e.timings = {timed, make_timing("reference_eager", 2.0)};
    e.findings = {
        {"lower_precision", 0, "ModelNew.forward made bfloat16 tensors (_to_copy x2, mm x1) in an fp32 run"}};
    e.baseline_ids = linked;
    store.insert_evaluation(e);
    const auto rows = kj::reports::results(store, "r-test-1");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].numerics == kj::precision::bf16);
    REQUIRE(rows[0].matched.has_value());
    CHECK(rows[0].matched->speedup == 2.0);
    CHECK(rows[0].matched->baseline.row_id == linked[0]);
    CHECK(rows[0].speedup_vs("eager") == 4.0);
    CHECK(rows[0].best_baseline == "eager"); // an eager baseline at other numerics is never the run's best
    CHECK(kj::reports::numerics_text(rows[0]) == "computed at bf16: 2.00x over eager at bf16");
  }
  SECTION("TF32 turned on: the time is not credited at fp32, but is compared with eager at tf32") {
    auto e = make_evaluation(run, problem, candidate, stack);
    auto timed = make_timing("candidate", 0.8);
    timed.params_json =
        R"({"trusted": false, "numerics": "tf32", "flags_changed": {"backends.cuda.matmul.allow_tf32": "False -> True"},
      "untrusted_reason": "the candidate changed torch's numerics flags (torch.backends.cuda.matmul.allow_tf32: False -> True): its forward ran at another precision than the run's, so its time is not credited at the run's precision"})";
    e.timings = {timed, make_timing("reference_eager", 2.0)};
    e.findings = {{"global_flags", 0, "torch.backends.cuda.matmul.allow_tf32: False -> True"}};
    e.baseline_ids = linked;
    store.insert_evaluation(e);
    const auto rows = kj::reports::results(store, "r-test-1");
    REQUIRE(rows.size() == 1);
    CHECK_FALSE(rows[0].untrusted.empty());
    CHECK_FALSE(rows[0].speedup.has_value());
    CHECK(rows[0].numerics == kj::precision::tf32);
    REQUIRE(rows[0].matched.has_value());
    CHECK(rows[0].matched->speedup == Approx(2.0));
  }
  SECTION("no baseline cached at the candidate's numerics: named, no speedup made up") {
    auto e = make_evaluation(run, problem, candidate, stack);
    auto timed = make_timing("candidate", 0.5);
    timed.params_json = R"({"numerics": "fp16"})";
    e.timings = {timed, make_timing("reference_eager", 2.0)};
    e.findings = {
        {"lower_precision", 0, "ModelNew.forward made float16 tensors (_to_copy x1) in an fp32 run"}};
    e.baseline_ids = linked;
    store.insert_evaluation(e);
    const auto rows = kj::reports::results(store, "r-test-1");
    REQUIRE(rows.size() == 1);
    CHECK(rows[0].numerics == kj::precision::fp16);
    CHECK_FALSE(rows[0].matched.has_value());
    CHECK(kj::reports::numerics_text(rows[0]) == "computed at fp16: no eager baseline at fp16 cached");
  }
}

TEST_CASE("the numerics are the judge's record, not read from the findings' text") {
  evaluation_fixture f;
  auto e = make_evaluation(f.run_id, f.problem, f.candidate, f.stack_id);
  e.timings = {make_timing("candidate", 0.5), make_timing("reference_eager", 2.0)};
  // findings that name bf16 and TF32, but the judge recorded no numerics in the timing: the run's own
  e.findings = {{"lower_precision", 0, "ModelNew.forward made bfloat16 tensors (mm x1) in an fp32 run"},
                {"global_flags", 0, "torch.backends.cuda.matmul.allow_tf32: False -> True"}};
  f.db.insert_evaluation(e);
  const auto rows = kj::reports::results(f.db, "r-test-1");
  REQUIRE(rows.size() == 1);
  CHECK_FALSE(rows[0].numerics.has_value());
  CHECK(kj::reports::numerics_text(rows[0]).empty());
}
