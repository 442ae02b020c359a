// kj compare's statistics on synthetic runs with realistic noise (tests/reports/synthetic.hpp): A/A pairs
// flag nothing, a 10% slowdown on 5 of 50 problems is flagged and nothing else, and the calibration counts
// right.
#include "reports/compare.hpp"
#include "reports/export.hpp"
#include "reports/leaderboard.hpp"
#include "reports/paper_table.hpp"
#include "tests/reports/synthetic.hpp"
#include "tests/support/catch_compat.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

using namespace kj::test::reports;
using kj::reports::change_class;

namespace {

std::size_t count(const kj::reports::comparison& c, change_class k) {
  return c.counts.contains(k) ? c.counts.at(k) : 0;
}

} // namespace

TEST_CASE("A/A pairs of synthetic runs with realistic noise flag nothing") {
  std::size_t compared = 0, flagged = 0, unchanged = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    // Same stack: the paired reference serves as the control. Another stack (an upgrade that changed
    // nothing): no control, so the host-bound problems can only be "too noisy".
    for (const bool same_stack : {true, false}) {
      const auto base = derive_all(synthetic_rows(50, seed * 2, "a", "stack-a"));
      const auto head = derive_all(synthetic_rows(50, seed * 2 + 1, "b", same_stack ? "stack-a" : "stack-b"));
      const auto c = kj::reports::compare(base, head, {});
      REQUIRE(c.rows.size() == 50);
      compared += c.rows.size();
      flagged += count(c, change_class::regressed) + count(c, change_class::improved);
      unchanged += count(c, change_class::unchanged);
      for (const auto& row : c.rows) {
        INFO("seed " << seed << " problem " << row.number << ": " << row.reason);
        CHECK(row.verdict != change_class::regressed);
      }
      CHECK_FALSE(c.failed());
    }
  }
  INFO(flagged << " flagged, " << unchanged << " unchanged of " << compared);
  CHECK(flagged == 0);
  CHECK(unchanged > compared * 8 / 10); // most are called unchanged, not waved through as "too noisy"
}

TEST_CASE("a 10% slowdown on 5 of 50 problems is flagged, and nothing else") {
  const std::map<int, double> slowed{
      {2, 0.10}, {9, 0.10}, {17, 0.10}, {31, 0.10}, {44, 0.10}}; // 9 is host-bound
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto base = derive_all(synthetic_rows(50, seed * 7, "a", "stack-a"));
    const auto head = derive_all(synthetic_rows(50, seed * 7 + 1, "b", "stack-a", slowed));
    const auto c = kj::reports::compare(base, head, {});
    REQUIRE(c.rows.size() == 50);
    for (const auto& row : c.rows) {
      const bool was_slowed = slowed.contains(row.number - 1);
      INFO("seed " << seed << " problem " << row.number << " ratio " << *row.ratio << ": " << row.reason);
      CHECK((row.verdict == change_class::regressed) == was_slowed);
      CHECK(row.verdict != change_class::improved);
    }
    CHECK(c.failed());
    REQUIRE(c.geomean_ratio);
    CHECK(*c.geomean_ratio > 1.0);
  }
}

TEST_CASE("across stacks a host-bound slowdown is too noisy to call, a GPU-bound one is called") {
  const std::map<int, double> slowed{{9, 0.10}, {2, 0.10}};
  const auto base = derive_all(synthetic_rows(20, 3, "a", "stack-a"));
  const auto head = derive_all(synthetic_rows(20, 4, "b", "stack-b", slowed));
  const auto c = kj::reports::compare(base, head, {});
  for (const auto& row : c.rows) {
    if (row.number == 10) {
      CHECK(row.verdict == change_class::too_noisy);
      CHECK(row.reason.find("host-bound") != std::string::npos);
    }
    if (row.number == 3) {
      INFO(row.reason << " ratio " << *row.ratio);
      CHECK(row.verdict == change_class::regressed);
    }
  }
}

TEST_CASE("a too-noisy reason says when its interval is the one against the paired reference") {
  // L1 10 on an H100 (the twenty-second session's A/A pair): the candidate x0.987 [0.981, 0.993], its eager
  // reference about 5% faster in the head; the reason named [1.040, 1.054] without saying against what.
  const auto base_rows = synthetic_rows(20, 3, "a", "stack-a");
  auto head_rows = synthetic_rows(20, 4, "b", "stack-a");
  for (auto& t : head_rows[2].timings) // problem 3 is GPU-bound (9 is the host-bound one)
    if (t.subject == "reference_eager") {
      for (double& ms : t.samples_ms)
        ms *= 0.95;
      t.median_ms = *t.median_ms * 0.95;
    }
  const auto c = kj::reports::compare(derive_all(base_rows), derive_all(head_rows), {});
  bool seen = false;
  for (const auto& row : c.rows)
    if (row.number == 3) {
      seen = true;
      INFO(row.reason << " ratio " << *row.ratio);
      CHECK(row.verdict == change_class::too_noisy);
      CHECK(row.reason.find("against the paired eager reference (which moved x0.9") != std::string::npos);
    }
  CHECK(seen);
}

TEST_CASE("verdict changes are broken or fixed, and unmatched problems are listed") {
  auto base_rows = synthetic_rows(6, 1, "a", "s");
  auto head_rows = synthetic_rows(5, 2, "b", "s");
  head_rows[1].verdict = kj::verdict::incorrect;
  base_rows[2].strict_verdict = kj::strict_verdict::fail;
  const auto c = kj::reports::compare(derive_all(base_rows), derive_all(head_rows), {});
  CHECK(c.rows.size() == 5);
  CHECK(c.only_base.size() == 1);
  for (const auto& row : c.rows) {
    if (row.number == 2) CHECK(row.verdict == change_class::broken);
    if (row.number == 3) CHECK(row.verdict == change_class::fixed);
  }
  CHECK(c.failed());
}

TEST_CASE("rows judged at other --set sizes are never paired, and the unmatched line says why") {
  auto base_rows = synthetic_rows(3, 1, "a", "s");
  auto head_rows = synthetic_rows(3, 2, "b", "s");
  head_rows[0].overrides_json = R"({"dim":64})"; // a reviewer's compare of dim=64 with dim=4096: 1.47x
  const auto c = kj::reports::compare(derive_all(base_rows), derive_all(head_rows), {});
  CHECK(c.rows.size() == 2);
  CHECK(c.only_base.size() == 1);
  CHECK(c.only_head.size() == 1);
  CHECK(kj::reports::compare_text(c).find("other --set sizes are other measurements") != std::string::npos);
  const auto none = kj::reports::compare(derive_all(synthetic_rows(2, 1, "a", "s")), {}, {});
  CHECK(kj::reports::compare_text(none).find("no problem in common") != std::string::npos);
}

TEST_CASE("calibration: an A/A pair of synthetic runs has no false alarm and catches injected 5% slowdowns") {
  const auto base = derive_all(synthetic_rows(50, 101, "a", "stack-a"));
  const auto head = derive_all(synthetic_rows(50, 102, "b", "stack-a"));
  kj::reports::calibration_options options;
  options.slowdowns = {0.05, 0.01};
  const auto cal = kj::reports::calibrate(base, head, {}, options);
  CHECK(cal.eligible == 50);
  CHECK(cal.false_regressions == 0);
  REQUIRE(cal.injections.size() == 2);
  CHECK(cal.injections[0].injected == 50); // each problem once over the rounds
  CHECK(cal.injections[0].detection_rate() >= 0.9);
  CHECK(cal.injections[0].other_regressed == 0);
  CHECK(cal.injections[1].detected == 0); // 1% is below the 3% minimum effect: never called
  CHECK_FALSE(cal.passed());              // the 1% injection misses the detection target, as it must
  const auto text = kj::reports::calibration_text(cal);
  CHECK(text.find("false-alarm rate 0.0%") != std::string::npos);
}

TEST_CASE("kj's own failure on a side is never the kernel's: not broken, no regression, not in any rate") {
  auto base_rows = synthetic_rows(4, 1, "a", "s");
  auto head_rows = synthetic_rows(4, 2, "b", "s");
  for (auto* rows : {&base_rows, &head_rows})
    for (auto& r : *rows)
      r.level = 1;                                   // one level, as an export holds
  head_rows[1].verdict = kj::verdict::harness_error; // kj's runner failed to start
  head_rows[2].verdict = kj::verdict::problem_error; // the reference failed
  const auto base = derive_all(base_rows), head = derive_all(head_rows);
  const auto c = kj::reports::compare(base, head, {});
  for (const auto& row : c.rows)
    if (row.number == 2 || row.number == 3) {
      CHECK(row.verdict == change_class::not_timed);
      CHECK(row.reason.find("not judged on a side") != std::string::npos);
    }
  CHECK_FALSE(c.failed()); // a CI gate does not fail on kj's own failure
  const auto board = kj::reports::leaderboard(head);
  REQUIRE_FALSE(board.empty());
  CHECK(board[0].not_judged == 2);
  CHECK(board[0].pass_compatible.total == 2); // the two judged evaluations only
  CHECK(board[0].pass_compatible.value() == Approx(1.0));
  const auto table = kj::reports::paper_table(head, false, {});
  REQUIRE_FALSE(table.rows.empty());
  CHECK(table.rows[0].cells.problems == 2); // Table 1 too: over the judged problems only
  CHECK(*table.rows[0].cells.pass_rate.value == Approx(1.0));
  std::ostringstream exported;
  kj::reports::write_kernelbench(head, exported);
  const auto file = nlohmann::json::parse(exported.str());
  CHECK(file.size() == 2); // problems 2 and 3 are not exported as incorrect kernels
}

TEST_CASE("a time kj does not trust on either side is compared with nothing: no change, no ratio") {
  auto base_rows = synthetic_rows(3, 1, "a", "s");
  auto head_rows = synthetic_rows(3, 2, "b", "s", {{0, -0.7}, {1, -0.7}, {2, -0.7}}); // head 3x faster
  for (auto& t : head_rows[1].timings)
    if (t.subject == "candidate")
      t.params_json =
          R"({"headline":"median","trusted":false,"untrusted_reason":"below the physical floor"})";
  const auto c = kj::reports::compare(derive_all(base_rows), derive_all(head_rows), {});
  REQUIRE(c.rows.size() == 3);
  for (const auto& row : c.rows) {
    INFO(row.key << ": " << row.reason);
    if (row.number == 2) {
      CHECK(row.verdict == change_class::not_timed);
      CHECK_FALSE(row.ratio);
      CHECK(row.reason.find("not trusted") != std::string::npos);
      CHECK(row.reason.find("physical floor") != std::string::npos);
    } else {
      CHECK(row.verdict == change_class::improved);
    }
  }
}
