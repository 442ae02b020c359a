// The real `kj runs`, `kj results` (wide, verbose, --verdict) and `kj export` (KernelBench's
// eval_results.json, JUnit XML) on the report fixture DB.
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <string>

using namespace kj::test;
using nlohmann::json;

TEST_CASE(
    "kj runs lists each run with its status, producer and counts, and rm removes a run, not a live one") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  reports::build_report_db(db);
  {
    auto store = kj::db::store::open(db);
    const auto id = store.create_run(db::make_run("r-failed"));
    store.set_run_status(id, "failed");
    store.set_run_detail(id, "--candidates runs/modelz: no such folder or file");
    const auto sized = store.create_run(db::make_run("r-sized"));
    store.set_run_status(sized, "finished");
    store.set_run_config(sized, R"({"overrides": {"dim": 64}, "timing": {"enabled": true, "rounds": 1}})");
  }
  const auto list = run_kj({"runs", "--db", db});
  REQUIRE(list.exit_code == 0);
  CHECK(contains(list.out, "r-fixture"));
  CHECK(contains(list.out, "abandoned")); // marked running, and no kj holds it
  CHECK(contains(list.out, "r-failed"));
  CHECK(contains(list.out, "no such folder or file"));
  CHECK(contains(list.out, "1 timing round, --set dim=64")); // the options that change what was measured
  const auto as_json = json::parse(run_kj({"runs", "--db", db, "--format", "json"}).out);
  REQUIRE(as_json.size() == 3);
  CHECK(as_json[0]["evaluations"] == 15);
  CHECK(as_json[0]["verdicts"]["correct"] == 10);

  // One run that cannot go leaves every run named in place.
  const auto partly = run_kj({"runs", "rm", "r-failed", "r-nope", "--db", db});
  CHECK(partly.exit_code == 2);
  CHECK(contains(partly.err, "no run 'r-nope'"));
  CHECK(contains(partly.err, "nothing removed"));
  CHECK(contains(run_kj({"runs", "--db", db}).out, "r-failed"));
  const auto removed = run_kj({"runs", "rm", "r-failed", "--db", db});
  CHECK(removed.exit_code == 0);
  CHECK(contains(removed.out, "removed run r-failed"));
  const auto missing = run_kj({"runs", "rm", "r-nope", "--db", db});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "no run 'r-nope'"));
  CHECK(json::parse(run_kj({"runs", "--db", db, "--format", "json"}).out).size() == 2);
  const auto no_id = run_kj({"runs", "rm", "--db", db});
  CHECK(no_id.exit_code == 2);
  CHECK(contains(no_id.err, "kj runs rm needs"));
  // A copy onto the database itself is refused, and the database is untouched.
  const auto onto_itself = run_kj({"db", "copy", "--db", db, "--to", (dir / "." / "kj.sqlite").string()});
  CHECK(onto_itself.exit_code == 2);
  CHECK(contains(onto_itself.err, "that is the database itself"));
  CHECK(json::parse(run_kj({"runs", "--db", db, "--format", "json"}).out).size() == 2);
}

TEST_CASE(
    "kj results shows producers, cuts nothing in its wide form, prints whole errors, filters verdicts") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  reports::build_report_db(db);
  const auto table = run_kj({"results", "--db", db});
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "producer"));
  // A --format a script asked for wins over -w and -v, which shape the table.
  for (const char* shape : {"-w", "-v"}) {
    const auto scripted = run_kj({"results", "--db", db, "--format", "json", shape});
    INFO(shape);
    CHECK(json::parse(scripted.out, nullptr, false).is_array());
  }
  CHECK(contains(table.out, "claude"));
  const auto wide = run_kj({"results", "--db", db, "--wide"});
  CHECK(contains(wide.out, "evil" + reports::payload)); // a long producer name, uncut
  const auto verbose = run_kj({"results", "--db", db, "-v", "--verdict", "runtime_error"});
  CHECK(count_of(verbose.out, "== evaluation") == 1);
  CHECK(contains(verbose.out, "Traceback: " + reports::payload));
  const auto failed = run_kj({"results", "--db", db, "--verdict", "failed", "--format", "json"});
  for (const auto& row : json::parse(failed.out)) {
    CHECK((row["verdict"] != "correct" || row["strict_verdict"] == "fail"));
    CHECK(row["verdict"] != "harness_error"); // not judged: no candidate's failure
    CHECK(row["verdict"] != "problem_error");
  }
  CHECK(json::parse(failed.out).size() == 6);
}

TEST_CASE("kj export writes KernelBench's eval_results.json and JUnit XML") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  reports::build_report_db(db);
  const auto mixed = run_kj({"export", "--format", "kernelbench", "--db", db});
  CHECK(mixed.exit_code == 2);
  CHECK(contains(mixed.err, "--level"));
  const auto kb = run_kj({"export", "--format", "kernelbench", "--db", db, "--level", "1", "--producer",
                          "agent", "-o", (dir / "eval_results.json").string()});
  REQUIRE(kb.exit_code == 0);
  const json file = json::parse(read_file(dir / "eval_results.json"));
  REQUIRE(file.size() == 4);
  const json& first = file["1"].at(0);
  CHECK(first["sample_id"] == 0);
  CHECK(first["compiled"] == true);
  CHECK(first["correctness"] == true);
  CHECK(first["runtime"] == 1.0);
  CHECK(first["runtime_stats"]["num_trials"] == 41);
  CHECK(file["4"][0]["compiled"] == false); // compile_error
  CHECK(file["4"][0]["runtime"] == -1.0);
  CHECK(file["4"][0]["metadata"]["compilation_error_name"] == "compile_error");

  const auto junit = run_kj({"export", "--format", "junit", "--db", db});
  REQUIRE(junit.exit_code == 0);
  CHECK(contains(junit.out, "<testsuite name=\"r-fixture\" tests=\"15\""));
  CHECK(count_of(junit.out, "<testcase ") == 15);
  CHECK(count_of(junit.out, "<failure ") == 6);
  CHECK_FALSE(contains(junit.out, "<script>")); // escaped
}

TEST_CASE("an evaluation page without timings says why it was not timed") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  reports::build_report_db(db);
  REQUIRE(run_kj({"report", "--db", db, "-o", (dir / "out").string()}).exit_code == 0);
  const json report = json::parse(read_file(dir / "out" / "report.json"));
  std::int64_t crashed = 0;
  for (const auto& p : report["problems"])
    if (p["verdict"] == "runtime_error") crashed = p["evaluation_id"];
  REQUIRE(crashed > 0);
  const std::string page = read_file(dir / "out" / "e" / (std::to_string(crashed) + ".html"));
  CHECK(contains(page, "Not timed: kj times a candidate only once it passed its checks (its verdict is "
                       "runtime_error)"));
}
