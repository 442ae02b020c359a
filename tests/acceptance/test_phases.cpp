// Where an evaluation's time goes (issue: throughput): every evaluation records its phases, measured on both
// sides of the worker, and they sum to its wall time; each candidate runs in a runner of its own, never
// reused by another, and no runner is started for a job that never comes; one warm judge serves a slot's
// evaluations, and a runner it started ahead that died before its candidate arrived is replaced, never
// blamed.
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// Fails to import when its process has imported a candidate before (a runner reused for another candidate).
const char* const flag_candidate = R"(import builtins

import torch
import torch.nn as nn
import torch.nn.functional as F

if getattr(builtins, "_kj_runner_used", False):
    raise RuntimeError("this process has run another candidate before")
builtins._kj_runner_used = True


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.gelu(x)
)";

} // namespace

TEST_CASE("phases sum to each evaluation's wall time, and no runner is reused by another candidate") {
  scratch_dir dir;
  fs::create_directories(dir / "candidates");
  for (int sample : {0, 1})
    write_file(dir / "candidates" / ("level_1_problem_2_sample_" + std::to_string(sample) + "_kernel.py"),
               flag_candidate);
  const auto r =
      run_kj({"run", "--device", "cpu", "--builtin", "--level", "1", "--ids", "2", "--candidates",
              (dir / "candidates").string(), "--min-samples", "3", "--max-time-ms", "50", "--keep-scratch",
              "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
             dir.path());
  INFO(r.err << r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("where the time went:") != std::string::npos);
  // One runner per candidate: none started ahead for a job that never came (each costs a Python with torch,
  // and on a small machine it would import beside the last candidate's timing). Runners are numbered from 0.
  int runners = 0;
  for (const auto& judge : fs::directory_iterator(dir / "cache" / "scratch"))
    if (fs::is_directory(judge.path() / "runners"))
      for (const auto& runner : fs::directory_iterator(judge.path() / "runners"))
        runners = std::max(runners, 1 + std::stoi(runner.path().filename().string().substr(7)));
  CHECK(runners == 2);

  auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  const auto rows = store.evaluation_rows({});
  REQUIRE(rows.size() == 2);
  for (const auto& row : rows) {
    CHECK(row.verdict == kj::verdict::correct); // each imported its candidate in a fresh process
    const auto e = store.get_evaluation(row.evaluation_id);
    REQUIRE(e);
    std::map<std::string, double> phases;
    double sum = 0;
    for (const auto& p : e->phases) {
      phases[p.phase] = p.seconds;
      sum += p.seconds;
    }
    for (const char* name : {"start", "load_problem", "load_candidate", "build_models", "compatible",
                             "strict", "findings", "timing", "memory", "exit"})
      CHECK(phases.contains(name));
    INFO("phases sum to " << sum << " s of " << e->duration_s << " s");
    CHECK(sum == Approx(e->duration_s).epsilon(0.05));
    CHECK(e->compatible_s == Approx(phases["compatible"]));
  }
}

TEST_CASE(
    "one warm judge serves a run, and a runner started ahead that died waiting is replaced, never blamed") {
  scratch_dir dir;
  fs::create_directories(dir / "candidates");
  for (int sample : {0, 1, 2})
    write_file(dir / "candidates" / ("level_1_problem_2_sample_" + std::to_string(sample) + "_kernel.py"),
               flag_candidate);
  // Every runner started ahead is killed the moment its candidate arrives (the judge's fault injection).
  ::setenv("KJ_TEST_FAULT", "spare", 1);
  const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--level", "1", "--ids", "2", "--candidates",
                         (dir / "candidates").string(), "--no-timing", "--keep-scratch", "--db",
                         (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
                        dir.path());
  ::unsetenv("KJ_TEST_FAULT");
  INFO(r.err << r.out);
  REQUIRE(r.exit_code == 0);
  auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  const auto rows = store.evaluation_rows({});
  REQUIRE(rows.size() == 3);
  for (const auto& row : rows)
    CHECK(row.verdict == kj::verdict::correct); // a fresh runner each, the killed spares kj's own business
  int judges = 0, jobs = 0;
  for (const auto& entry : fs::directory_iterator(dir / "cache" / "scratch"))
    if (entry.path().filename().string().starts_with("judge-")) {
      ++judges;
      for (const auto& file : fs::directory_iterator(entry.path()))
        jobs += file.path().filename().string().starts_with("job-");
    }
  CHECK(judges == 1); // the slot's judge stayed warm for all three
  CHECK(jobs == 3);
}
