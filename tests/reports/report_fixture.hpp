// A fixture DB for the report tests, built through db::store from a design table: two producers over seven
// problems (two levels) with chosen verdicts and speedups, compile-default baselines, raw samples around
// exact medians, plus one evaluation by a producer whose every text is an HTML/script injection attempt.
// Tests compute expected numbers from the design table with their own code.
#pragma once

#include "tests/db/db_fixtures.hpp"

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kj::test::reports {

inline const std::string payload = "</script><script>alert(1)</script>";

struct design_row {
  std::string producer;
  int level = 1;
  int number = 1;
  std::string verdict = "correct";
  std::string strict = "pass";        // pass, fail
  std::optional<double> candidate_ms; // none: not timed
  std::optional<double> reference_ms; // eager
  std::optional<double> compile_ms;   // a linked compile-default baseline
  double spread = 0.002;              // relative step between samples (41 samples, median exact)
};

// The design; "agent" and "claude" are the producers the tests check.
inline std::vector<design_row> design() {
  return {
      {"agent", 1, 1, "correct", "pass", 1.0, 2.0, 1.5},
      {"agent", 1, 2, "correct", "pass", 2.0, 1.0, 3.0},
      {"agent", 1, 3, "correct", "fail", 0.5, 2.0, 2.0}, // strict failure: never counted as a speedup
      {"agent", 1, 4, "compile_error", "fail", std::nullopt, std::nullopt, std::nullopt},
      {"agent", 2, 1, "correct", "pass", 1.0, 1.25, 0.8},
      {"agent", 2, 2, "crashed", "fail", std::nullopt, std::nullopt, std::nullopt},
      {"agent", 2, 3, "correct", "pass", 1.0, 3.0, 2.0},
      {"claude", 1, 1, "correct", "pass", 1.0, 1.1, std::nullopt},
      {"claude", 1, 2, "incorrect", "fail", std::nullopt, std::nullopt, std::nullopt},
      {"claude", 1, 3, "timeout", "fail", std::nullopt, std::nullopt, std::nullopt},
      {"claude", 1, 4, "correct", "pass", 4.0, 2.0, std::nullopt},
      {"claude", 2, 1, "correct", "pass", 0.5, 1.0, 0.75},
      {"claude", 2, 2, "correct", "pass", 1.0, 1.02, std::nullopt, 0.01}, // faster, but not beyond its noise
      {"claude", 2, 3, "correct", "pass", 1.0, 1.5, 1.2},
  };
}

// 41 samples median*(1 + spread*k), k = -20..20, in a scrambled order; their median is exactly `median`.
inline std::vector<double> samples_around(double median, double spread) {
  std::vector<double> out;
  for (int i = 0; i < 41; ++i) {
    const int k = (i * 17) % 41 - 20;
    out.push_back(median * (1 + spread * k));
  }
  return out;
}

inline kj::db::timing_record timing(const std::string& subject, double median, double spread) {
  kj::db::timing_record t;
  t.subject = subject;
  t.method = "robust";
  t.clock = "host";
  t.params_json = R"({"headline":"median"})";
  t.samples_ms = samples_around(median, spread);
  t.median_ms = t.mean_ms = median;
  t.min_ms = median * (1 - 20 * spread);
  t.max_ms = median * (1 + 20 * spread);
  t.stdev_ms = median * spread * 12;
  return t;
}

// Writes the design (and the injection row) into a new DB at `path`, run "r-fixture".
inline void build_report_db(const std::filesystem::path& path) {
  using namespace kj::test::db;
  auto store = kj::db::store::open(path);
  const auto stack = store.upsert_stack(make_stack("fixture-stack"));
  auto run_record = make_run("r-fixture", stack);
  run_record.config_json = R"({"precision":"fp32"})";
  const auto run = store.create_run(run_record);
  const auto problem_id = [&](int level, int number, const std::string& name = "") {
    auto p = make_problem(level, number, "class Model: pass  # " + std::to_string(number));
    if (!name.empty()) p.name = name;
    return store.upsert_problem(p);
  };
  for (const auto& d : design()) {
    const auto problem = problem_id(d.level, d.number);
    auto candidate = make_candidate(problem, 0, "class ModelNew: pass  # " + d.producer);
    candidate.producer = d.producer;
    const auto candidate_id = store.upsert_candidate(candidate);
    auto e = make_evaluation(run, problem, candidate_id, stack);
    e.verdict = kj::parse_verdict(d.verdict).value();
    e.strict_verdict = kj::parse_strict_verdict(d.strict).value();
    e.strict_failed = d.strict == "fail" ? (d.verdict == "correct" ? "nan" : "compatible") : "";
    if (d.strict == "pass") // a passing case has no message: its page's cell must still say why
      e.cases.push_back({.case_class = "random", .index = 0, .seed = 7, .status = kj::case_status::pass});
    if (d.candidate_ms) e.timings.push_back(timing("candidate", *d.candidate_ms, d.spread));
    if (d.reference_ms) e.timings.push_back(timing("reference_eager", *d.reference_ms, d.spread));
    if (d.compile_ms) {
      auto b = make_baseline("compile-" + d.producer + std::to_string(d.level * 10 + d.number),
                             "compile-default", *d.compile_ms, problem, stack);
      b.method = "robust";
      b.samples_ms = samples_around(*d.compile_ms, d.spread);
      e.baseline_ids.push_back(store.insert_baseline(b));
    }
    if (d.producer == "agent" && d.level == 1 && d.number == 1)
      e.timings[0].params_json =
          R"({"headline":"median","trace":{"library_share":0.25,"busy_ms_per_call":0.9}})";
    store.insert_evaluation(e);
  }
  // Every text a model or a file controls carries the payload; it must show as text, never run.
  const auto problem = problem_id(1, 9, "Evil" + payload);
  auto candidate = make_candidate(problem, 0, "# " + payload + "\nclass ModelNew: pass\n");
  candidate.producer = "evil" + payload;
  candidate.path = "/candidates/" + payload + ".py";
  const auto candidate_id = store.upsert_candidate(candidate);
  auto e = make_evaluation(run, problem, candidate_id, stack);
  e.verdict = kj::verdict::runtime_error;
  e.error = "Traceback: " + payload;
  e.strict_verdict = kj::strict_verdict::fail;
  e.strict_failed = "compatible";
  e.findings = {{"torch_fallback", 1, payload}};
  store.insert_evaluation(e);
}

} // namespace kj::test::reports
