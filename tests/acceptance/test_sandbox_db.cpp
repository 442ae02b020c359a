// The sandbox's file system through the real kj: the results DB beside kj's own executable is out of a
// candidate's reach (the sandbox exposes kj's executable, never its folder: a candidate once read other
// candidates' sources and verdicts from there), and /tmp is writable as on any host, and the job's own.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

using namespace kj::test;
namespace fs = std::filesystem;

namespace {

// Looks for SQLite files beside the running kj (the runner is kj itself) and in its working folder's parents;
// any it can open make its forward raise with what it read, so that the verdict says so.
constexpr const char* k_reader = R"py(import glob
import os

import torch
import torch.nn as nn


def _peek():
    here = os.path.dirname(os.readlink("/proc/self/exe"))
    found = []
    for path in glob.glob(os.path.join(here, "*.sqlite")) + glob.glob(os.path.join(here, "..", "*.sqlite")):
        try:
            with open(path, "rb") as f:
                found.append(f"{path}: {f.read(16)!r}")
        except OSError:
            pass
    return found


class ModelNew(nn.Module):
    def forward(self, A, B):
        found = _peek()
        if found:
            raise RuntimeError("LEAKED the results DB: " + "; ".join(found))
        return torch.matmul(A, B)
)py";

} // namespace

TEST_CASE("a candidate cannot open the results DB that lies in kj's own folder") {
  scratch_dir dir;
  const fs::path candidates = dir / "candidates";
  fs::create_directories(candidates);
  write_file(candidates / "level_1_problem_1_sample_0_kernel.py", k_reader);
  const fs::path db = kj_binary().parent_path() / "kj-own-folder-test.sqlite";
  fs::remove(db);
  const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--level", "1", "--ids", "1", "--candidates",
                         candidates.string(), "--db", db.string(), "--cache-dir", (dir / "cache").string(),
                         "--no-timing", "--run-id", "own-folder"},
                        kj_binary().parent_path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = run_kj({"results", "--db", db.string(), "--run", "own-folder", "--format", "json"});
  fs::remove(db);
  REQUIRE(results.exit_code == 0);
  const auto rows = nlohmann::json::parse(results.out);
  REQUIRE(rows.size() == 1);
  INFO(rows.dump(2));
  CHECK(rows[0].value("verdict", "") == "correct");
  CHECK(results.out.find("LEAKED") == std::string::npos);
}

namespace {

// Writes its sources under /tmp at import, as released kernels do (CUDA-L1's L3 43), and fails if it sees
// another job's file there.
constexpr const char* k_tmp_writer = R"py(import os

import torch.nn as nn
import torch.nn.functional as F

if os.path.exists("/tmp/cuda_extensions/other_job.txt"):
    raise RuntimeError("SAW another job's /tmp")
os.makedirs("/tmp/cuda_extensions", exist_ok=True)
with open("/tmp/cuda_extensions/other_job.txt", "w") as f:
    f.write("written by one candidate\n")


class ModelNew(nn.Module):
    def forward(self, x):
        with open("/tmp/cuda_extensions/other_job.txt") as f:
            assert f.read().startswith("written")
        return F.gelu(x)
)py";

} // namespace

TEST_CASE("a candidate writes /tmp as on any host, and its /tmp is its job's own") {
  scratch_dir dir;
  const fs::path candidates = dir / "candidates";
  fs::create_directories(candidates);
  for (int sample : {0, 1}) // the second must not see the first's file
    write_file(candidates / ("level_1_problem_2_sample_" + std::to_string(sample) + "_kernel.py"),
               k_tmp_writer);
  const auto r = run_kj({"run", "--device", "cpu", "--builtin", "--level", "1", "--ids", "2", "--candidates",
                         candidates.string(), "--db", (dir / "kj.sqlite").string(), "--cache-dir",
                         (dir / "cache").string(), "--no-timing", "--run-id", "tmp"},
                        dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results =
      run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--run", "tmp", "--format", "json"});
  const auto rows = nlohmann::json::parse(results.out);
  REQUIRE(rows.size() == 2);
  INFO(rows.dump(2));
  for (const auto& row : rows)
    CHECK(row.value("verdict", "") == "correct"); // before: load_error, Permission denied: '/tmp/...'
}
