// A new user's first hour, round three (issue 46), through the real `kj` on the CPU: kj's own slowness is
// never charged to a candidate's --timeout, another tool's SQLite file is never written, and a candidate file
// named for another problem is never judged against the one selected.
#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/acceptance/kj_user.hpp"
#include "tests/support/corpus.hpp"
#include "tests/support/suite_check.hpp"

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace kj::test;
using nlohmann::json;

namespace {

// ReLU whose reference sleeps: the judge runs the reference, so kj's own work (trials, strict classes) is
// slow while the candidate is instant.
const char* const k_slow_reference = R"(import time

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        time.sleep(4.0)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
)";

std::string model_new(const std::string& body) {
  return "import time\n\nimport torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
         "    def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n" +
         body;
}

} // namespace

TEST_CASE("kj's own slow work is never a candidate's timeout, and the candidate's own time still is") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(dir / "1_SlowReference.py", k_slow_reference);
  write_file(dir / "nan_kernel.py", model_new("        return torch.full_like(x, float('nan'))\n"));
  write_file(dir / "sleepy_kernel.py", model_new("        time.sleep(3600)\n        return x\n"));
  // The reference's 4 s a call makes kj's trials and strict checks (5 trials, then strict's first failing
  // case: it stops there once compatible failed) take about 30 s, past --timeout 20 (kj refuses a limit
  // below 4 x its own start: 20 leaves a loaded CI host 5 s), while the candidate answers at once: it is
  // judged (incorrect: NaN), never `timeout`.
  const auto instant = u.kj({"run", "--device", "cpu", "--problem", "1_SlowReference.py", "--candidates",
                             "nan_kernel.py", "--timeout", "20", "--run-id", "nan"});
  REQUIRE(instant.exit_code == 0);
  auto rows = u.results();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "incorrect");
  CHECK(rows[0]["reason"] == "nonfinite"); // NaN against numbers: no tolerance question
  CHECK(contains(rows[0]["error"].get<std::string>(), "of them NaN or Inf against a number"));
  double seconds = 0; // kj's own time was longer than the limit
  for (const auto& [phase, s] : rows[0]["phases"].items())
    seconds += s.get<double>();
  CHECK(seconds > 20);
  // A candidate that never answers uses its whole limit: timeout, naming both clocks.
  const auto sleepy = u.kj({"run", "--device", "cpu", "--problem", "1_SlowReference.py", "--candidates",
                            "sleepy_kernel.py", "--timeout", "20", "--run-id", "sleepy"});
  REQUIRE(sleepy.exit_code == 0);
  rows = json::parse(u.kj({"results", "--run", "sleepy", "--format", "json"}).out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "timeout");
  CHECK(contains(rows[0]["error"].get<std::string>(), "all of the 20 s it may (kj's own work"));
}

TEST_CASE(
    "kj's draw of each timed call's inputs in the candidate's process is kj's time, not the candidate's") {
  scratch_dir dir;
  const user u{dir, {}};
  // Fresh inputs per timed call: kj draws 32 MiB of them in the candidate's process (about 50 ms a call on
  // the CPU) for a forward of microseconds. Two rounds of 15 s (the wall cap of a round) put about 28 s of
  // kj's draws inside the candidate's process, past --timeout 20: charged to it, that was `timeout` in 'tp'.
  // --min-samples above the timer's floor's 100 samples once made the floor a harness_error.
  write_file(dir / "1_LargeDraw.py", "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                                     "    def forward(self, x):\n        return x[0] * 2\n\n\n"
                                     "def get_inputs():\n    return [torch.randn(2048, 4096)]\n\n\n"
                                     "def get_init_inputs():\n    return []\n");
  write_file(dir / "row_kernel.py", model_new("        return x[0] * 2\n"));
  const auto r =
      u.kj({"run", "--device", "cpu", "--problem", "1_LargeDraw.py", "--candidates", "row_kernel.py",
            "--timeout", "20", "--no-strict", "--rounds", "2", "--min-samples", "150", "--run-id", "draws"});
  REQUIRE(r.exit_code == 0);
  const auto rows = u.results();
  REQUIRE(rows.size() == 1);
  INFO(rows[0].dump());
  CHECK(rows[0]["verdict"] == "correct");
  // a speedup, unless the loaded CI host moved under every comparable pair (then none is credited)
  CHECK((rows[0]["speedup"].is_number() || speedup_withheld_for_host(rows[0])));
}

TEST_CASE(
    "kj's draw of each checked call's inputs in the candidate's process is kj's time, not the candidate's") {
  scratch_dir dir;
  const user u{dir, {}};
  // The runner draws each trial's inputs in the candidate's process: 40 trials of a get_inputs() that takes
  // 0.6 s put 24 s of kj's (and the problem's) work there, past --timeout 20. Charged to it, that was a
  // timeout. (--timeout 10 was refused outright on a loaded host: kj asks for 4 times its own start.)
  write_file(dir / "1_SlowInputs.py",
             "import time\nimport torch\nimport torch.nn as nn\n\n\n"
             "class Model(nn.Module):\n    def forward(self, x):\n        return x * 2\n\n\n"
             "def get_inputs():\n    time.sleep(0.6)\n    return [torch.randn(16, 64)]\n\n\n"
             "def get_init_inputs():\n    return []\n");
  write_file(dir / "kernel.py", model_new("        return x * 2\n"));
  const auto r = u.kj({"run", "--device", "cpu", "--problem", "1_SlowInputs.py", "--candidates", "kernel.py",
                       "--timeout", "20", "--no-strict", "--no-timing", "--trials", "40"});
  REQUIRE(r.exit_code == 0);
  const auto rows = u.results();
  REQUIRE(rows.size() == 1);
  INFO(rows[0]["error"].get<std::string>());
  CHECK(rows[0]["verdict"] == "correct");
}

TEST_CASE("another tool's SQLite file is refused before anything is written to it") {
  scratch_dir dir;
  const user u{dir, {}};
  {
    using kj::db::sqlite::connection;
    auto other = connection::open(u.db(), connection::open_mode::read_write_create);
    other.exec(
        "CREATE TABLE runs (id INTEGER PRIMARY KEY, note TEXT); INSERT INTO runs (note) VALUES ('mine')",
        "another tool's table");
  }
  const auto before = read_file(u.db());
  for (const auto& args : {std::vector<std::string>{"db", "migrate"},
                           std::vector<std::string>{"run", "--device", "cpu", "--level", "1", "--ids", "2",
                                                    "--candidates", "builtin:identity"}}) {
    const auto r = u.kj(args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "is not a kerneljudge database: it holds tables of another tool"));
  }
  CHECK(read_file(u.db()) == before); // byte for byte, in its own journal mode
  CHECK_FALSE(fs::exists(u.db() + "-wal"));
  CHECK_FALSE(fs::exists(u.db() + "-shm"));
}

TEST_CASE("a candidate file named for another problem than the one selected is refused, naming both") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(dir / "level_1_problem_3_sample_0_kernel.py", "ModelNew = None\n");
  const auto r = u.run({"--ids", "2", "--candidates", "level_1_problem_3_sample_0_kernel.py"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "is named for level 1 problem 3, which is not selected"));
  CHECK(contains(r.err, "--level 1 --ids 3"));
  const auto listed =
      u.run({"--ids", "2", "--candidates", "level_1_problem_3_sample_0_kernel.py", "--collect-only"});
  CHECK(listed.exit_code == 2);
  CHECK_FALSE(fs::exists(u.db())); // nothing recorded
}

TEST_CASE("two files that give one problem the same sample with different code are refused, naming both") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(dir / "c" / "2_GELU.py", "import torch\nModelNew = None  # one model's code\n");
  write_file(dir / "c" / "level_1_problem_2_sample_0_kernel.py",
             "import torch\nModelNew = None  # another's\n");
  const auto r = u.run({"--ids", "2", "--candidates", "c"});
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err,
                 "2_GELU.py and level_1_problem_2_sample_0_kernel.py both give problem 2 (GELU) sample 0"));
  CHECK_FALSE(fs::exists(u.db())); // nothing recorded
  // The same code under both names is one candidate (judged once), not a clash.
  write_file(dir / "c" / "2_GELU.py", read_file(dir / "c" / "level_1_problem_2_sample_0_kernel.py"));
  const auto listed = u.run({"--ids", "2", "--candidates", "c", "--collect-only"});
  CHECK(listed.exit_code == 0);
}

TEST_CASE("a database in a folder kj may not write is named so by writers, and readers still read it") {
  scratch_dir dir;
  const user u{dir, {}};
  kj::db::store::open(u.db()); // an empty kj database
  fs::create_directories(dir / "ro");
  fs::rename(u.db(), dir / "ro" / "kj.sqlite");
  const std::string db = (dir / "ro" / "kj.sqlite").string();
  // chattr +i: read-only even for root (CAP_LINUX_IMMUTABLE); where it is not allowed, permission bits for
  // others
  const bool immutable = std::system(("chattr +i " + (dir / "ro").string() + " 2>/dev/null").c_str()) == 0;
  if (!immutable && ::geteuid() == 0) {
    skip_test("neither chattr +i nor permission bits make a folder read-only for root here");
    return;
  }
  if (!immutable) fs::permissions(dir / "ro", fs::perms::owner_read | fs::perms::owner_exec);
  const auto migrate = run_kj({"db", "migrate", "--db", db});
  const auto read = run_kj({"runs", "--db", db});
  std::system(("chattr -i " + (dir / "ro").string() + " 2>/dev/null").c_str());
  fs::permissions(dir / "ro", fs::perms::owner_all);
  CHECK(migrate.exit_code == 2);
  CHECK(contains(migrate.err, "its folder " + (dir / "ro").string() + " is not writable"));
  CHECK(read.exit_code == 0);
}

TEST_CASE("off a terminal kj prints a status line at a steady interval: counts, rate, ETA and what runs") {
  scratch_dir dir;
  const user u{dir, {{"KJ_HEARTBEAT_S", "1"}}}; // stderr is a pipe here, as in a CI log or under nohup
  const auto r = u.run({"--ids", "2-3", "--candidates", "builtin:identity", "--no-timing"});
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.err, "kj: progress: 0 of 2 evaluations in 0:0"));
  CHECK(contains(r.err, "judging L1 "));
  CHECK(contains(r.err, "kj: judged 2 of 2 evaluations"));
  const auto never = u.run({"--ids", "2", "--candidates", "builtin:identity", "--no-timing", "--progress",
                            "never", "--run-id", "quiet"});
  CHECK_FALSE(contains(never.err, "kj: progress:"));
  // A candidate without a file is named in the exports as --collect-only names it (review 10: it was empty).
  const auto csv = u.kj({"results", "--run", "quiet", "--format", "csv"});
  CHECK(contains(csv.out, ",(identity),identity,"));
}

TEST_CASE("a candidate's exception keeps its traceback: its own file, function and line") {
  scratch_dir dir;
  const user u{dir, {}};
  write_file(
      dir / "raise_kernel.py",
      "import torch.nn as nn\n\n\ndef inner():\n    raise RuntimeError('deep failure in inner()')\n\n\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        inner()\n        return x\n");
  REQUIRE(u.run({"--ids", "2", "--candidates", "raise_kernel.py", "--no-timing"}).exit_code == 0);
  const auto rows = u.results();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "runtime_error");
  const std::string error = rows[0]["error"];
  CHECK(contains(error, "raise_kernel.py\", line 5, in inner"));
  CHECK(contains(error, "RuntimeError: deep failure in inner()"));
  const auto table = u.kj({"results"});
  CHECK(contains(table.out, "RuntimeError: deep failure in inner()")); // the telling line, not kj's header
}

TEST_CASE("forked children sharing one allocation count it once against --memory-limit") {
  scratch_dir dir;
  const user u{dir, {}};
  // 600 MiB written once, then 4 children that only sleep: resident sizes summed say 3000 MiB, the memory
  // held is 600 MiB (plus Python's). Under a 1.5 GiB limit this is no out-of-memory.
  write_file(dir / "fork_kernel.py", R"(import os
import time

import torch.nn as nn

_big = bytearray(600 << 20)
for i in range(0, len(_big), 4096):
    _big[i] = 1
_children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        time.sleep(3600)
        os._exit(0)
    _children.append(pid)
time.sleep(1)  # the judge's watchdog samples every 0.2 s


class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(0.5)
        return x * 0.5 * (1.0 + __import__('torch').erf(x / 2 ** 0.5))
)");
  REQUIRE(u.run({"--ids", "2", "--candidates", "fork_kernel.py", "--no-timing", "--no-strict",
                 "--memory-limit", "1.5"})
              .exit_code == 0);
  const auto rows = u.results();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] != "oom");
  CHECK(rows[0]["reason"] != "out_of_memory");
  CHECK_FALSE(contains(rows[0]["error"].get<std::string>(), "of host memory"));
}
