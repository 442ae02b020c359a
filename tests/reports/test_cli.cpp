// The real `kj compare`, `kj compare --calibrate`, `kj history` and `kj report` on a DB of synthetic runs:
// exit codes, outputs and errors.
#include "tests/reports/synthetic.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

using namespace kj::test;
using namespace kj::test::reports;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Runs aa-1 and aa-2 (unchanged kernels, realistic noise) and slow (problems 3, 8, 13, 18, 23 10% slower).
std::string synthetic_db(const scratch_dir& dir) {
  const std::string path = (dir / "kj.sqlite").string();
  auto store = kj::db::store::open(path);
  store_synthetic(store, synthetic_rows(30, 11, "aa-1", "stack-a"), "aa-1");
  store_synthetic(store, synthetic_rows(30, 12, "aa-2", "stack-a"), "aa-2");
  std::map<int, double> slowed;
  for (int i : {2, 7, 12, 17, 22})
    slowed[i] = 0.10;
  store_synthetic(store, synthetic_rows(30, 13, "slow", "stack-a", slowed), "slow");
  return path;
}

} // namespace

TEST_CASE("kj compare: exit 0 on an A/A pair, exit 1 naming exactly the slowed problems") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const auto aa = run_kj({"compare", "aa-1", "aa-2", "--db", db, "--markdown", (dir / "aa.md").string(),
                          "--json", (dir / "aa.json").string(), "--html", (dir / "aa.html").string()});
  INFO(aa.out << aa.err);
  CHECK(aa.exit_code == 0);
  CHECK(contains(aa.out, "no regression"));
  CHECK(contains(read_file(dir / "aa.md"), "### kj compare: no regression"));
  CHECK(json::parse(read_file(dir / "aa.json"))["regression"] == false);
  CHECK(contains(read_file(dir / "aa.html"), "no regression"));

  const auto slow = run_kj({"compare", "run=aa-1", "run=slow", "--db", db, "--format", "json"});
  CHECK(slow.exit_code == 1);
  const json report = json::parse(slow.out);
  std::set<int> regressed;
  for (const auto& row : report["rows"])
    if (row["class"] == "regressed") regressed.insert(row["problem_id"].get<int>());
  CHECK(regressed == std::set<int>{3, 8, 13, 18, 23});
  CHECK(report["base"]["runs"][0] == "aa-1");
  CHECK(report["rows"][0]["base"]["timing_id"].get<int>() > 0); // every ratio names its DB rows

  // Two DB files: BASE from one, HEAD from the other.
  std::filesystem::copy_file(db, dir / "other.sqlite");
  const auto two = run_kj({"compare", "aa-1", "slow", "--base-db", db, "--head-db",
                           (dir / "other.sqlite").string(), "--format", "markdown"});
  CHECK(two.exit_code == 1);
  CHECK(contains(two.out, "| regressed |"));
}

TEST_CASE("kj compare --calibrate reports the false-alarm and detection rates of an A/A pair") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const auto r =
      run_kj({"compare", "aa-1", "aa-2", "--db", db, "--calibrate", "--json", (dir / "cal.json").string()});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "false-alarm rate 0.0%"));
  CHECK(contains(r.out, "calibration PASSED"));
  const json cal = json::parse(read_file(dir / "cal.json"));
  CHECK(cal["eligible"] == 30);
  CHECK(cal["injections"][0]["injected"] == 30);
  CHECK(cal["injections"][0]["detection_rate"].get<double>() >= 0.9);
}

TEST_CASE("kj history lists a problem's timings across runs with the change against the previous one") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const auto r = run_kj({"history", "3_Problem_3.py", "--db", db, "--format", "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json entries = json::parse(r.out);
  REQUIRE(entries.size() == 3);
  CHECK(entries[0]["run"] == "aa-1");
  CHECK_FALSE(entries[0].contains("change"));
  CHECK(entries[2]["run"] == "slow");
  CHECK(entries[2]["change"]["class"] == "regressed"); // slow after aa-2
  const auto table = run_kj({"history", "3:3", "--db", db});
  CHECK(table.exit_code == 0);
  CHECK(contains(table.out, "regressed"));
  CHECK(contains(table.out, "-- L3 3 Problem_3 (kernelbench main)")); // the suite and version in the heading
  const auto by_name = run_kj({"history", "Problem_3", "--db", db, "--format", "csv"});
  CHECK(by_name.exit_code == 0);
  CHECK(contains(by_name.out, "change_class"));
  CHECK(contains(by_name.out, ",speedup,speedup_noisy,")); // the ~ of the table, as a column
  const auto lower = run_kj({"history", "problem_3", "--db", db, "--format", "csv"}); // a name in any case
  CHECK(lower.exit_code == 0);
  CHECK(lower.out == by_name.out);
}

TEST_CASE("kj compare, history and report reject bad input with exit code 2 and a clear message") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const auto unknown_run = run_kj({"compare", "nosuch", "aa-1", "--db", db});
  CHECK(unknown_run.exit_code == 2);
  CHECK(contains(unknown_run.err, "no run 'nosuch'"));
  const auto bad_key = run_kj({"compare", "flavour=x", "aa-1", "--db", db});
  CHECK(bad_key.exit_code == 2);
  CHECK(contains(bad_key.err, "unknown key 'flavour'"));
  const auto no_match = run_kj({"compare", "producer=nobody", "aa-1", "--db", db});
  CHECK(no_match.exit_code == 2);
  CHECK(contains(no_match.err, "matches no evaluation"));
  const auto history = run_kj({"history", "99:99", "--db", db});
  CHECK(history.exit_code == 2);
  CHECK(contains(history.err, "no evaluation of problem '99:99'"));
  const auto report = run_kj({"report", "--db", db, "--run", "nosuch", "-o", (dir / "r").string()});
  CHECK(report.exit_code == 2);
  CHECK(contains(report.err, "no run 'nosuch'"));
  // A producer no evaluation has is named so, with the producers there are (review 11: "no evaluations").
  const auto producer =
      run_kj({"report", "--db", db, "--run", "aa-1", "--producer", "nosuch", "-o", (dir / "r").string()});
  CHECK(producer.exit_code == 2);
  CHECK(contains(producer.err, "--producer nosuch matches no evaluation of the runs reported (aa-1)"));
  const auto both = run_kj({"report", "--db", db, "--run", "aa-1", "--all-runs", "-o", (dir / "r").string()});
  CHECK(both.exit_code == 2);
  // -o names a folder: a page's name is refused before anything is written.
  const auto page = run_kj({"report", "--db", db, "-o", (dir / "x.html").string()});
  CHECK(page.exit_code == 2);
  CHECK(contains(page.err, "kj report writes a folder"));
  CHECK_FALSE(std::filesystem::exists(dir / "x.html"));
  const auto word = run_kj({"show", "evaluation", "abc", "--db", db});
  CHECK(word.exit_code == 2);
  CHECK(contains(word.err, "kj show evaluation abc: an id is a whole number of 1 or more"));
  const auto shown = run_kj({"show", "evaluation", "1", "--db", db});
  CHECK(shown.exit_code == 0);
  CHECK(contains(shown.out, "evaluation 1 of run aa-1")); // the run by its name, never its row
  const auto missing_db = run_kj({"compare", "a", "b", "--db", (dir / "absent.sqlite").string()});
  CHECK(missing_db.exit_code == 2);
  CHECK(contains(missing_db.err, "absent.sqlite"));
  for (const char* cmd : {"report", "compare", "history"}) {
    const auto help = run_kj({cmd, "--help"});
    INFO(cmd);
    CHECK(help.exit_code == 0);
  }
}

TEST_CASE("kj report into the folder of an earlier report leaves none of its evaluation pages behind") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const fs::path out = dir / "r";
  REQUIRE(run_kj({"report", "--db", db, "--run", "aa-1", "-o", out.string()}).exit_code == 0);
  std::set<std::string> first;
  for (const auto& page : fs::directory_iterator(out / "e"))
    first.insert(page.path().filename().string());
  write_file(out / "e" / "notes.txt", "mine"); // not a page of kj's: kept
  REQUIRE(run_kj({"report", "--db", db, "--run", "slow", "-o", out.string()}).exit_code == 0);
  std::set<std::string> second;
  for (const auto& page : fs::directory_iterator(out / "e"))
    second.insert(page.path().filename().string());
  CHECK(second.contains("notes.txt"));
  for (const auto& name : first) // aa-1's evaluations are not slow's: none of their pages is left
    CHECK_FALSE(second.contains(name));
  CHECK(second.size() > 1);
}

TEST_CASE("kj report: a group no evaluation of which was judged says why each cell is blank") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  {
    auto store = kj::db::store::open(db);
    auto rows = synthetic_rows(2, 21, "broken", "stack-a");
    for (auto& r : rows) { // the problems failed alone: nothing of the candidates was judged or timed
      r.verdict = kj::verdict::problem_error;
      r.strict_verdict = kj::strict_verdict::none;
      r.timings.clear();
    }
    store_synthetic(store, rows, "broken");
  }
  const auto r = run_kj({"report", "--db", db, "-o", (dir / "out").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string page = read_file(dir / "out" / "index.html");
  CHECK(contains(page, "no evaluation of this group was judged"));         // the leaderboard's rates
  CHECK(contains(page, "not judged: the problem failed (problem_error)")); // the problems table's timings
  CHECK_FALSE(contains(page, "the candidate failed its checks"));          // never the candidate's failure
}

TEST_CASE("kj export of a run that judged an edited file again exports its newest evaluation") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  {
    auto store = kj::db::store::open(db);
    auto rows = synthetic_rows(2, 31, "edited", "stack-a");
    for (auto& r : rows)
      r.level = 1;
    auto fixed = rows[0]; // the resume judged problem 1's sample 0 again: the file was edited
    rows[0].verdict = kj::verdict::incorrect;
    rows[0].strict_verdict = kj::strict_verdict::none;
    rows[0].timings.clear();
    fixed.candidate_hash += "-edited";
    rows.push_back(fixed);
    store_synthetic(store, rows, "edited");
  }
  const auto kb = run_kj({"export", "--db", db, "--run", "edited", "--format", "kernelbench"});
  INFO(kb.err);
  REQUIRE(kb.exit_code == 0);
  const json file = json::parse(kb.out);
  REQUIRE(file.size() == 2);
  CHECK(file[file.begin().key()].size() == 1); // one sample 0, not two
  CHECK(contains(kb.err, "1 older evaluations of a sample judged again"));
  const auto junit = run_kj({"export", "--db", db, "--run", "edited", "--format", "junit"});
  REQUIRE(junit.exit_code == 0);
  CHECK(contains(junit.out, "failures=\"0\"")); // the superseded failure is not the run's any more
}

TEST_CASE("'latest' names the newest run in kj results, report, export and costs, as in kj compare") {
  scratch_dir dir;
  const std::string db = synthetic_db(dir);
  const auto plain = run_kj({"results", "--db", db, "--format", "json"});
  const auto latest = run_kj({"results", "--db", db, "--run", "latest", "--format", "json"});
  REQUIRE(plain.exit_code == 0);
  CHECK(latest.exit_code == 0);
  CHECK(latest.out == plain.out);
  CHECK(run_kj({"export", "--db", db, "--run", "latest", "--format", "junit"}).exit_code == 0);
  CHECK(run_kj({"costs", "--db", db, "--run", "latest"}).exit_code == 0);
  const auto report = run_kj({"report", "--db", db, "--run", "latest", "-o", (dir / "r").string()});
  INFO(report.err);
  CHECK(report.exit_code == 0);
}

TEST_CASE("kj compare of two sides with no problem in common exits 2: a CI gate never passes on nothing") {
  scratch_dir dir;
  const std::string path = (dir / "kj.sqlite").string();
  {
    auto store = kj::db::store::open(path);
    store_synthetic(store, synthetic_rows(3, 11, "base", "stack-a"), "base");
    auto rows = synthetic_rows(3, 12, "head", "stack-a");
    for (auto& r : rows) // judged at other sizes: never paired with the base's (review 11 U3)
      r.overrides_json = R"({"dim":64})";
    store_synthetic(store, rows, "head");
  }
  const auto r = run_kj({"compare", "base", "head", "--db", path});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "have no problem in common: nothing was compared"));
  CHECK(contains(r.out, "nothing compared"));
  CHECK_FALSE(contains(r.out, "no regression"));
}
