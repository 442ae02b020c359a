// Schema v2: strict-verdict cases, static findings and labels are stored with their evaluation and reported.
#include "tests/db/db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj::test::db;

TEST_CASE("strict cases and findings are written with the evaluation and read back for reports") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 19));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  auto e = make_evaluation(s.run_id, problem, candidate, s.stack_id);
  e.strict_verdict = kj::strict_verdict::fail;
  e.strict_failed = "nan,inputs";
  e.cases = {{"random", 0, 11, kj::case_status::pass, "fp32", 1e-7, 1e-8, 0, 0, -1, ""},
             {"nan", 0, 12, kj::case_status::fail, "fp32", 0.5, 0.1, 0, 3, 17, "3 NaN/Inf positions differ"},
             {"inputs", 0, 0, kj::case_status::fail, "", 0, 0, 1, 0, -1, "input(s) [0] modified in place"}};
  e.findings = {{"threads", 7, "threading.Thread(target=f)"},
                {"precision", 9, "x.half()"},
                {"threads", 12, "t.start()"}};
  e.compatible_s = 1.25;
  e.strict_s = 4.5;
  const auto id = s.db.insert_evaluation(e);

  // get_evaluation reads all of it back
  const auto back = s.db.get_evaluation(id);
  REQUIRE(back.has_value());
  CHECK(back->strict_verdict == kj::strict_verdict::fail);
  CHECK(back->strict_failed == "nan,inputs");
  CHECK(back->compatible_s == 1.25);
  CHECK(back->strict_s == 4.5);
  REQUIRE(back->cases.size() == 3);
  const auto& nan = back->cases[1];
  CHECK(nan.case_class == "nan");
  CHECK(nan.seed == 12);
  CHECK(nan.status == kj::case_status::fail);
  CHECK(nan.judged_against == "fp32");
  CHECK(nan.max_abs_err == 0.5);
  CHECK(nan.nonfinite_mismatches == 3);
  CHECK(nan.first_index == 17);
  CHECK(nan.message == "3 NaN/Inf positions differ");
  CHECK(back->cases[2].judged_against.empty());
  REQUIRE(back->findings.size() == 3);
  CHECK(back->findings[1].kind == "precision");
  CHECK(back->findings[1].line == 9);
  CHECK(back->findings[1].excerpt == "x.half()");
  CHECK(back->baseline_ids.empty());

  CHECK(count_rows(s.path, "verification_cases") == 3);
  CHECK(count_rows(s.path, "static_findings") == 3);
  kj::db::evaluation_filter filter;
  filter.run_uid = "r-test-1";
  const auto rows = s.db.evaluation_rows(filter);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].strict_verdict == kj::strict_verdict::fail);
  CHECK(rows[0].strict_failed == "nan,inputs");
  CHECK(rows[0].finding_kinds == std::vector<std::string>{"precision", "threads"}); // distinct, sorted
  CHECK(rows[0].degenerate.empty());

  auto db = kj::db::sqlite::connection::open(s.path, kj::db::sqlite::connection::open_mode::read_only);
  CHECK(db.query_int64("SELECT nonfinite_mismatches FROM verification_cases WHERE case_class = 'nan'",
                       "nan") == 3);
  CHECK(db.query_text("SELECT status FROM verification_cases WHERE case_class = 'inputs'", "inputs") ==
        "fail");
}

TEST_CASE("a case the table refuses (its class and index twice) keeps nothing of the evaluation") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 20));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  auto e = make_evaluation(s.run_id, problem, candidate, s.stack_id);
  e.cases = {{"random", 0, 1, kj::case_status::pass, "", 0, 0, 0, 0, -1, ""},
             {"random", 0, 2, kj::case_status::pass, "", 0, 0, 0, 0, -1, ""}};
  CHECK(contains(db_error_of([&] { s.db.insert_evaluation(e); }), "insert verification case"));
  CHECK(count_rows(s.path, "evaluations") == 0);
  CHECK(count_rows(s.path, "trials") == 0);
}
