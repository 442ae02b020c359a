// What a new user mistypes or misconfigures in their first hour, through the real `kj`: suggestions, ranges
// in words, exit code 2 naming the cause, nothing left behind; and read commands on a read-only mount.
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <string>

using namespace kj::test;
namespace fs = std::filesystem;

TEST_CASE("a mistyped command or option gets a suggestion, and a range reads as words, with exit code 2") {
  const auto command = run_kj({"rn"});
  CHECK(command.exit_code == 2);
  CHECK(contains(command.err, "unknown command 'rn' (did you mean 'run'?)"));
  const auto option = run_kj({"run", "--candidate", "x"});
  CHECK(option.exit_code == 2);
  CHECK(contains(option.err, "--candidate: did you mean --candidates?"));
  // A mistyped required option: the typo is named first, not only the option it left missing.
  const auto required = run_kj({"export", "--formt", "junit"});
  CHECK(required.exit_code == 2);
  CHECK(contains(required.err, "unknown option --formt; did you mean --format?"));
  const auto jobs = run_kj({"run", "-j", "0"});
  CHECK(jobs.exit_code == 2);
  CHECK(contains(jobs.err, "--jobs: must be a whole number of at least 1, not '0'"));
  CHECK(jobs.err.size() < 200); // not the largest double in full
  const auto verdict = run_kj({"results", "--verdict", "wrong"});
  CHECK(verdict.exit_code == 2);
  CHECK(contains(verdict.err, "'wrong' is not a verdict"));
}

TEST_CASE("a setup kj cannot use is exit code 2 naming what to change, and records no run") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  write_file(dir / "a-file", "");
  SECTION("a mistyped candidates folder") {
    const auto r = run_kj({"run", "--device", "cpu", "--candidates", (dir / "modelz").string(), "--db", db});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, (dir / "modelz").string()));
    CHECK_FALSE(fs::exists(db));
  }
  SECTION("KJ_PYTHON that is not there") {
    const auto r = run_program({kj_binary().string(), "run", "--device", "cpu", "--db", db}, {},
                               {{"KJ_PYTHON", (dir / "no-python3").string()}});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "KJ_PYTHON=" + (dir / "no-python3").string() + ": no such executable"));
    CHECK_FALSE(fs::exists(db));
  }
  SECTION("a cache folder kj cannot write") {
    const auto r = run_kj({"run", "--device", "cpu", "--cache-dir", (dir / "a-file").string(), "--db", db});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "cache folder " + (dir / "a-file").string() + " is not writable"));
  }
  SECTION("kj report -o naming a file") {
    reports::build_report_db(db);
    const auto r = run_kj({"report", "--db", db, "-o", (dir / "a-file").string()});
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "a file of that name exists"));
  }
  SECTION("a merge that fails leaves no output behind") {
    const std::string out = (dir / "merged.sqlite").string();
    for (const std::string& input : {(dir / "absent.sqlite").string(), (dir / "a-file").string()}) {
      const auto r = run_kj({"merge", input, "-o", out});
      INFO(r.err);
      CHECK(r.exit_code == 2);
      CHECK_FALSE(fs::exists(out));
    }
  }
}

TEST_CASE("read commands work on a DB on a read-only mount, its WAL copied without its index") {
  if (run_program({"unshare", "-rm", "true"}).exit_code != 0)
    skip_test("user namespaces are not available here (unshare -rm)");
  scratch_dir dir;
  const fs::path ro = dir / "ro";
  fs::create_directories(ro);
  {
    reports::build_report_db(dir / "kj.sqlite");
    auto writer = kj::db::store::open(dir / "kj.sqlite"); // while it is open, its last commit is in the WAL
    writer.create_run(db::make_run("in-the-wal"));
    fs::copy_file(dir / "kj.sqlite", ro / "kj.sqlite");
    fs::copy_file(dir / "kj.sqlite-wal", ro / "kj.sqlite-wal");
  }
  const std::string db = (ro / "kj.sqlite").string();
  const std::string kj = kj_binary().string();
  const std::string report = (dir / "report").string();
  const auto r = run_program(
      {"unshare", "-rm", "sh", "-c",
       "mount --bind -o ro " + ro.string() + " " + ro.string() + " && " + kj + " results --db " + db +
           " --run r-fixture && " + kj + " runs --db " + db + " && " + kj + " db info --db " + db + " && " +
           kj + " report --db " + db + " --run r-fixture -o " + report + " && " + kj +
           " compare r-fixture r-fixture --db " + db + " && " + kj + " history 1:1 --db " + db + " && " + kj +
           " export --format junit --run r-fixture --db " + db});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.out, "in-the-wal"));
  CHECK(fs::exists(fs::path(report) / "index.html"));
  CHECK(contains(r.out, "<testsuite name=\"r-fixture\""));
}
