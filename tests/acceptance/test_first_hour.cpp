// A new user's first hour on the CPU, through the real `kj` (issue 25): the main command on a tiny subset,
// two model folders (one file Latin-1, one binary), a mistyped path, a resume with other options (refused,
// then forced), Ctrl-C and resume, runs, report, compare and export, each with its exit code and message; the
// DB passes PRAGMA integrity_check at the end.
#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/acceptance/live_kj.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kj::test;
using kj::db::sqlite::connection;
using nlohmann::json;

namespace {

std::string problem_source(const std::string& file) {
  return read_file(source_dir() / "kernelbench" / "suite" / "level1" / file);
}

// modelA: GELU right (a Latin-1 byte in a comment), Sum_Reduction wrong. modelB: GELU a binary file,
// Sum_Reduction right; GELU's binary file twice (under both names: one candidate), and files for problems
// not selected.
void write_models(const scratch_dir& dir) {
  const std::string gelu = problem_source("2_GELU.py"), sum = problem_source("3_Sum_Reduction.py");
  write_file(dir / "modelA" / "level_1_problem_2_sample_0_kernel.py",
             gelu + "\n# r\xE9sultat exact (Latin-1)\nModelNew = Model\n");
  write_file(
      dir / "modelA" / "level_1_problem_3_sample_0_kernel.py",
      sum + "\nclass ModelNew(Model):\n    def forward(self, x):\n        return 2 * super().forward(x)\n");
  write_file(dir / "modelB" / "level_1_problem_2_sample_0_kernel.py", std::string("\x7F"
                                                                                  "ELF\x02\x01\x00\xFF\xFE",
                                                                                  9));
  write_file(dir / "modelB" / "level_1_problem_3_sample_0_kernel.py", sum + "\nModelNew = Model\n");
  write_file(dir / "modelB" / "2_GELU.py", std::string("\x7F"
                                                       "ELF\x02\x01\x00\xFF\xFE",
                                                       9));
  for (const char* other : {"level_1_problem_5_sample_0_kernel.py", "level_2_problem_1_sample_0_kernel.py"})
    write_file(dir / "modelB" / other, "ModelNew = None\n");
}

} // namespace

TEST_CASE("a new user's first hour: runs, two models, mistakes, Ctrl-C, report, compare, export") {
  scratch_dir dir;
  write_models(dir);
  const std::string db = (dir / "kj.sqlite").string();
  const char* shared_cache = std::getenv("KJ_CACHE_DIR");
  const std::string cache = shared_cache && *shared_cache ? shared_cache : (dir / "cache").string();
  const auto kj = [&](std::vector<std::string> args) {
    args.insert(args.end(), {"--db", db});
    args.insert(args.begin(), kj_binary().string());
    const auto r = run_program(args, dir.path(), {{"KJ_HEARTBEAT_S", "1"}}); // the heartbeat within a second
    INFO("kj " << args[1] << " " << (args.size() > 2 ? args[2] : "") << "\n" << r.err);
    return r;
  };
  const std::vector<std::string> cpu{"--device", "cpu", "--level", "1", "--cache-dir", cache};
  const auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    args.insert(args.end(), cpu.begin(), cpu.end());
    return kj(args);
  };

  // The main command on a tiny subset, quick: its run id comes first, the table at the end.
  const auto first = run({"--ids", "2", "--candidates", "identity", "--quick"});
  REQUIRE(first.exit_code == 0);
  CHECK(contains(first.err, "kj: run r"));
  CHECK_FALSE(contains(first.err, "already in this run are kept"));
  CHECK(contains(first.out, "1 evaluations: 1 correct"));
  // One timing round (--quick) cannot tell a host's drift from a speedup: the identity's speedup says so
  // (a loaded host once recorded it at 5.55x with no mark).
  const auto first_json = json::parse(kj({"results", "--format", "json"}).out);
  REQUIRE(first_json.size() == 1);
  CHECK(first_json[0].value("speedup_noisy", false));
  // --quick's timing, as the run stored it (docs/usage.md, "A quick first look")
  const json quick = json::parse(kj({"runs", "--format", "json"}).out).at(0)["config"]["timing"];
  CHECK(quick["min_samples"] == 5);
  CHECK(quick["min_time_ms"] == 20.0);
  CHECK(quick["max_time_ms"] == 200.0);
  CHECK(quick["target_rel_ci"] == 0.02);
  CHECK(quick["rounds"] == 1);
  CHECK(quick["floor"] == false);

  // A mistyped model folder: exit 2 naming it, and no run left behind.
  const auto typo = run({"--ids", "2-3", "--candidates", "modelAA"});
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "--candidates modelAA: no such folder or file"));

  // Two model folders; a Latin-1 byte and a binary file are judged, named, and never stop the run; while a
  // candidate is judged, the heartbeat says which and for how long.
  const auto a =
      run({"--ids", "2-3", "--candidates", "modelA/", "--quick", "--run-id", "a", "--progress", "always"});
  REQUIRE(a.exit_code == 0);
  CHECK(contains(a.err, "modelA/level_1_problem_2_sample_0_kernel.py: not UTF-8 (byte 0xE9 at line"));
  CHECK(contains(a.err, "kj: judging L1 "));
  CHECK(contains(a.out, "2 evaluations: 1 correct, 1 incorrect"));
  // modelB stops at its first failure (--maxfail 1, exit 1) and resumes; its other files are one line.
  const auto b_stopped =
      run({"--ids", "2-3", "--candidates", "modelB", "--quick", "--run-id", "b", "--maxfail", "1"});
  CHECK(b_stopped.exit_code == 1);
  CHECK(contains(b_stopped.err, "stopping (--maxfail 1)"));
  CHECK(contains(b_stopped.err, "2 files in modelB name problems not selected"));
  CHECK(contains(b_stopped.err, "level_1_problem_2_sample_0_kernel.py: the same source and sample as"));
  CHECK(count_of(b_stopped.err, "kj: skipping") == 1); // that duplicate; the unselected files are one line
  CHECK_FALSE(contains(b_stopped.err, "already in this run are kept"));
  // --rerun-failed after --maxfail judges the failed candidate and the one never judged, never calling it
  // passed (a reviewer saw "2 candidates passed before" where one had).
  const auto rerun =
      run({"--ids", "2-3", "--candidates", "modelB", "--quick", "--rerun-failed", "--run-id", "b-rerun"});
  CHECK(rerun.exit_code == 0);
  CHECK(contains(rerun.err, "1 candidate failed in run b (interrupted: what it never judged is judged too)"));
  CHECK_FALSE(contains(rerun.err, "passed before"));
  CHECK(contains(rerun.out, "2 evaluations: 1 correct, 1 load_error"));
  const auto b = run({"--ids", "2-3", "--candidates", "modelB", "--quick", "--run-id", "b"});
  REQUIRE(b.exit_code == 0);
  CHECK(contains(b.err, "1 evaluations already in this run are kept"));
  CHECK(contains(b.out, "2 evaluations: 1 correct, 1 load_error"));

  // Resuming with other options is refused naming the difference; --force extends it and says so.
  const auto other = run({"--ids", "2-4", "--candidates", "modelA/", "--quick", "--run-id", "a"});
  CHECK(other.exit_code == 2);
  CHECK(contains(other.err, "--ids: 2-3 in the run, 2-4 now"));
  const auto forced =
      run({"--ids", "2-3", "--candidates", "modelA", "--quick", "--no-strict", "--run-id", "a", "--force"});
  CHECK(forced.exit_code == 0);
  CHECK(contains(forced.err, "2 evaluations already in this run are kept"));

  // Ctrl-C once the first evaluation is in; then the same command resumes it.
  const std::vector<std::string> c_args{
      "run",      "--candidates", "identity", "--ids", "1-3",         "--no-timing", "--run-id", "c",
      "--device", "cpu",          "--level",  "1",     "--cache-dir", cache,         "--db",     db};
  const pid_t pid = start_kj(c_args, dir / "c.log");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (evaluations_so_far(db, "c") < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(read_file(dir / "c.log"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(contains(read_file(dir / "c.log"), "Resume with: kj run --run-id c"));
  const auto resumed = kj(std::vector<std::string>(c_args.begin(), c_args.end() - 2));
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.err, "kj: resuming run c (interrupted)"));
  CHECK(evaluations_so_far(db, "c") == 3);

  // The failures of modelA's run again, narrowed with -k: a new run of the one failed candidate.
  const auto again = run(
      {"--ids", "2-3", "--candidates", "modelA", "--quick", "--rerun-failed", "-k", "sum", "--run-id", "a2"});
  CHECK(again.exit_code == 0);
  CHECK(contains(again.err, "--rerun-failed: 1 candidate failed in run a"));
  CHECK(contains(again.out, "1 evaluations: 1 incorrect"));

  // Every run with its status and producer; none left running.
  const auto runs = json::parse(kj({"runs", "--format", "json"}).out);
  REQUIRE(runs.size() == 6);
  CHECK(runs[1]["producer"] == "modelA");
  CHECK(runs[2]["producer"] == "modelB");
  CHECK(contains(runs[1]["detail"].get<std::string>(), "--force: --no-strict"));
  for (const auto& r : runs)
    CHECK(r["status"] == "finished");

  // The report tells the two models apart; compare calls modelB's GELU broken (exit 1).
  const auto report = kj({"report", "--run", "a", "--run", "b", "-o", (dir / "report").string()});
  CHECK(report.exit_code == 0);
  const std::string leaderboard = read_file(dir / "report" / "leaderboard.csv");
  CHECK(contains(leaderboard, "\nmodelA,1,"));
  CHECK(contains(leaderboard, "\nmodelB,1,"));
  const auto compare = kj({"compare", "a", "b"});
  CHECK(compare.exit_code == 1);
  CHECK(contains(compare.out, "broken"));

  // Export for KernelBench's scripts and for CI.
  CHECK(kj({"export", "--format", "kernelbench", "--run", "a", "-o", (dir / "eval_results.json").string()})
            .exit_code == 0);
  const json eval = json::parse(read_file(dir / "eval_results.json"));
  CHECK(eval["2"][0]["correctness"] == true);
  CHECK(eval["3"][0]["correctness"] == false);
  const auto junit = kj({"export", "--format", "junit", "--run", "b"});
  CHECK(contains(junit.out, "<failure message=\"load_error\""));

  auto check = connection::open(db, connection::open_mode::read_only);
  CHECK(check.query_text("PRAGMA integrity_check", "integrity check") == "ok");
}
