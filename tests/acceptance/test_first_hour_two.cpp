// A new user's first hour, round two (issue 34): each mistake a user made that kj answered wrong, through the
// real `kj` on the CPU: a folder named like a built-in source, two model folders with one name, limits too
// small for kj itself, a hosted API without a key, another process holding the database, Ctrl-C during a
// build, and the README's quick start as written.
#include "engine/exec/process.hpp"
#include "tests/acceptance/kj_user.hpp"
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
using nlohmann::json;

namespace {

std::string gelu_source() {
  return read_file(source_dir() / "kernelbench" / "suite" / "level1" / "2_GELU.py");
}
const std::string k_wrong =
    "\nclass ModelNew(Model):\n    def forward(self, x):\n        return 2 * super().forward(x)\n";

} // namespace

TEST_CASE("a folder named identity is judged as a folder, and builtin:identity is the built-in source") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(dir / "identity" / "2_GELU.py", gelu_source() + k_wrong);
  const auto folder = u.run({"--ids", "2", "--candidates", "identity", "--no-timing"});
  REQUIRE(folder.exit_code == 0);
  CHECK(contains(folder.err, "--candidates identity: the folder ./identity"));
  CHECK(contains(folder.out, "1 evaluations: 1 incorrect"));
  CHECK(contains(folder.out, "identity/"));
  const auto builtin = u.run({"--ids", "2", "--candidates", "builtin:identity", "--no-timing"});
  REQUIRE(builtin.exit_code == 0);
  CHECK(contains(builtin.out, "1 evaluations: 1 correct"));
  const json runs = u.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0]["producer"] == "identity/");
  CHECK(runs[1]["producer"] == "identity");
  const auto unknown = u.run({"--ids", "2", "--candidates", "builtin:mine"});
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.err, "--candidates builtin:mine: no such built-in source"));
}

TEST_CASE("two model folders with one name are reported apart, with a warning") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(dir / "v1" / "claude" / "2_GELU.py", gelu_source() + "\nModelNew = Model\n");
  write_file(dir / "v2" / "claude" / "2_GELU.py", gelu_source() + k_wrong);
  REQUIRE(u.run({"--ids", "2", "--candidates", "v1/claude", "--no-timing", "--run-id", "same1"}).exit_code ==
          0);
  REQUIRE(u.run({"--ids", "2", "--candidates", "v2/claude", "--no-timing", "--run-id", "same2"}).exit_code ==
          0);
  const auto report = u.kj({"report", "--run", "same1", "--run", "same2", "-o", (dir / "rep").string()});
  REQUIRE(report.exit_code == 0);
  CHECK(
      contains(report.err, "producer label 'claude' names 2 candidate folders: reported apart as v1/claude"));
  const std::string leaderboard = read_file(dir / "rep" / "leaderboard.csv");
  CHECK(contains(leaderboard, "\nv1/claude,"));
  CHECK(contains(leaderboard, "\nv2/claude,"));
  CHECK(contains(report.out, "report of 2 evaluations"));
  // -o never overwrites an index.html kj did not write
  write_file(dir / "mine" / "index.html", "<html>my own page</html>");
  const auto mine = u.kj({"report", "--run", "same1", "-o", (dir / "mine").string()});
  CHECK(mine.exit_code == 2);
  CHECK(contains(mine.err, "holds files that kj report did not write (an index.html among them)"));
  CHECK(read_file(dir / "mine" / "index.html") == "<html>my own page</html>");
  write_file(dir / "data" / "report.json", "{\"my\": \"precious\"}"); // nor over other files of the user's
  CHECK(u.kj({"report", "--run", "same1", "-o", (dir / "data").string()}).exit_code == 2);
  CHECK(read_file(dir / "data" / "report.json") == "{\"my\": \"precious\"}");
  CHECK(u.kj({"report", "--run", "same1", "-o", (dir / "rep").string()}).exit_code ==
        0); // its own: rewritten
}

TEST_CASE("limits too small for kj itself are the user's mistake: exit 2 before any candidate, no run") {
  scratch_dir dir;
  const user u{dir, {}};
  const auto timeout = u.run({"--ids", "2", "--candidates", "builtin:identity", "--timeout", "0.5"});
  CHECK(timeout.exit_code == 2);
  CHECK(contains(timeout.err, "--timeout 0.5: kj's own worker took"));
  const auto memory = u.run({"--ids", "2", "--candidates", "builtin:identity", "--memory-limit", "0.001"});
  CHECK(memory.exit_code == 2);
  CHECK(contains(memory.err, "--memory-limit 0.001: kj's own runner needs about"));
  // kj's own processes (bubblewrap's and the runner) are not the candidate's to be blamed for.
  const auto processes = u.run({"--ids", "2", "--candidates", "builtin:identity", "--process-limit", "1"});
  CHECK(processes.exit_code == 2);
  CHECK(contains(processes.err, "--process-limit 1: kj's own runner is"));
  CHECK_FALSE(fs::exists(u.db())); // refused before the database is opened
  write_file(dir / "other" / "level_1_problem_5_sample_0_kernel.py", "ModelNew = None\n");
  const auto nothing = u.run({"--ids", "2", "--candidates", "other"}); // a folder for another problem
  CHECK(nothing.exit_code == 2);
  CHECK(contains(nothing.err, "no candidate in other matches the selected problems"));
  CHECK_FALSE(fs::exists(u.db())); // no file, no lock left behind
  CHECK_FALSE(fs::exists(u.db() + ".lock"));
}

TEST_CASE("a hosted API without a key is refused at once, and kj generate leaves no run behind") {
  scratch_dir dir;
  const user u{dir, {{"OPENAI_API_KEY", ""}, {"ANTHROPIC_API_KEY", ""}}};
  const auto start = std::chrono::steady_clock::now();
  const auto run = u.run({"--ids", "2", "--adapter", "openai", "--model", "gpt-5.4"});
  CHECK(run.exit_code == 2);
  CHECK(contains(run.err, "openai: no API key: set OPENAI_API_KEY"));
  const auto generate = u.kj({"generate", "--adapter", "anthropic", "--model", "claude-x", "--level", "1"});
  CHECK(generate.exit_code == 2);
  CHECK(contains(generate.err, "anthropic: no API key: set ANTHROPIC_API_KEY"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20)); // no retries on a dead host
  CHECK_FALSE(fs::exists(u.db()));                                            // no run, not even a ghost
}

TEST_CASE("another process's lock on the database is waited for, naming it, and giving up says who held it") {
  scratch_dir dir;
  const user u{dir, {}};
  REQUIRE(u.run({"--ids", "2", "--candidates", "builtin:identity", "--no-timing"}).exit_code == 0);
  // A write transaction of another process, held until the test says so (or 120 s), and marked as taken.
  const auto hold = [&] {
    fs::remove(u.db() + ".release");
    return std::thread([&] {
      run_program(
          {KJ_TEST_PYTHON, "-c",
           "import os,sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); "
           "c.execute('BEGIN IMMEDIATE'); open(sys.argv[1]+'.held','w').close(); t=time.time()\n"
           "while not os.path.exists(sys.argv[1]+'.release') and time.time()-t < 120: time.sleep(0.05)",
           u.db()});
    });
  };
  const auto held = [&] {
    for (int i = 0; i < 400 && !fs::exists(u.db() + ".held"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fs::remove(u.db() + ".held");
  };
  std::thread holder = hold();
  held();
  // kj waits for the lock, says so after 5 s naming the holder, and goes on once it is let go.
  const pid_t pid = start_kj({"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates",
                              "builtin:identity", "--no-timing", "--db", u.db()},
                             dir / "wait.log");
  for (int i = 0; i < 2400 && !contains(read_file(dir / "wait.log"), "kj: waiting for the database"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  write_file(u.db() + ".release", "");
  holder.join();
  int status = 0;
  ::waitpid(pid, &status, 0);
  const std::string waited = read_file(dir / "wait.log");
  INFO(waited);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(contains(waited, "its lock is held by pid "));
  CHECK(contains(waited, "1 evaluations: 1 correct"));
  holder = hold();
  held();
  user impatient{dir, {{"KJ_DB_LOCK_WAIT_S", "1"}}};
  const auto gave_up = impatient.run({"--ids", "2", "--candidates", "builtin:identity", "--no-timing"});
  write_file(u.db() + ".release", "");
  holder.join();
  CHECK(gave_up.exit_code == 2);
  CHECK(contains(gave_up.err, "database is locked (held by pid "));
  CHECK(contains(gave_up.err, "nothing already recorded is lost"));
}

TEST_CASE("Ctrl-C during a candidate's build records no verdict for it, and the resume judges it") {
  scratch_dir dir;
  const user u{dir, {}};
  // The build imports the candidate (it names cpp_extension): its module sleeps, long enough to be cut.
  const fs::path file = dir / "slow" / "2_GELU.py";
  write_file(file,
             gelu_source() + "\nimport time, torch.utils.cpp_extension\ntime.sleep(120)\nModelNew = Model\n");
  const std::vector<std::string> args{
      "run",         "--device", "cpu", "--level", "1", "--ids", "2", "--candidates", (dir / "slow").string(),
      "--no-timing", "--run-id", "cut"};
  std::vector<std::string> with_db = args;
  with_db.insert(with_db.end(), {"--db", u.db()});
  const pid_t pid = start_kj(with_db, dir / "cut.log");
  std::this_thread::sleep_for(std::chrono::seconds(10)); // the probe, then the build's import
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(read_file(dir / "cut.log"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(evaluations_so_far(u.db(), "cut") == 0); // no "crashed" for a build the user cut
  // The same source is built again on the resume (nothing was cached of it); without its sleep it is judged.
  write_file(file, gelu_source() + "\nimport torch.utils.cpp_extension\nModelNew = Model\n");
  const auto resumed = u.kj(args);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.out, "1 evaluations: 1 correct"));
}

TEST_CASE("a batch system's TERM to every process of a run records no verdict for the candidate in flight") {
  scratch_dir dir;
  const user u{dir, {}};
  // Slurm's scancel, requeue or time limit signals the whole task: here kj's judge and the candidate's
  // process first, kj a second later (the order a batch system does not promise). The candidate sleeps in
  // forward.
  const fs::path file = dir / "slow" / "2_GELU.py";
  write_file(file, gelu_source() + "\nimport time\n\nclass ModelNew(Model):\n    def forward(self, x):\n"
                                   "        time.sleep(60)\n        return super().forward(x)\n");
  const std::vector<std::string> args{
      "run",         "--device", "cpu", "--level", "1", "--ids", "2", "--candidates", (dir / "slow").string(),
      "--no-timing", "--run-id", "term"};
  std::vector<std::string> with_db = args;
  with_db.insert(with_db.end(), {"--db", u.db()});
  const pid_t pid = start_kj(with_db, dir / "term.log");
  std::this_thread::sleep_for(std::chrono::seconds(12)); // the probe, the judge, the runner, into forward
  const std::vector<int> below =
      kj::exec::descendants(pid); // as a batch system's process tracking finds them
  CHECK(below.size() >= 2);       // a judge and the candidate's process at least
  for (int p : below)
    ::kill(p, SIGTERM);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  INFO(read_file(dir / "term.log"));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 130);
  CHECK(evaluations_so_far(u.db(), "term") == 0); // never "crashed" by the stop
  write_file(file, gelu_source() + "\nModelNew = Model\n");
  const auto resumed = u.kj(args);
  CHECK(resumed.exit_code == 0);
  CHECK(contains(resumed.out, "1 evaluations: 1 correct"));
}

TEST_CASE("the README's quick start works as written: two model folders, a report, a comparison") {
  scratch_dir dir;
  const user u{dir, {}};
  const std::string models = (source_dir() / "examples" / "models").string();
  const auto a =
      u.kj({"run", "--device", "cpu", "--candidates", models + "/modelA/", "--quick", "--run-id", "A"});
  REQUIRE(a.exit_code == 0);
  CHECK(contains(a.out, "3 evaluations: 2 correct, 1 incorrect"));
  const auto b =
      u.kj({"run", "--device", "cpu", "--candidates", models + "/modelB/", "--quick", "--run-id", "B"});
  REQUIRE(b.exit_code == 0);
  CHECK(contains(b.out, "3 evaluations: 2 correct, 1 incorrect"));
  const auto report = u.kj({"report", "--run", "A", "--run", "B", "-o", (dir / "report").string()});
  CHECK(report.exit_code == 0);
  const std::string leaderboard = read_file(dir / "report" / "leaderboard.csv");
  CHECK(contains(leaderboard, "\nmodelA,1,"));
  CHECK(contains(leaderboard, "\nmodelB,1,"));
  const auto compare = u.kj({"compare", "A", "B"});
  CHECK(compare.exit_code == 1); // modelB's sum is broken where modelA's is right
  CHECK(contains(compare.out, "broken"));
}
