// The results DB beside kj's own executable is out of a candidate's reach: the sandbox exposes kj's
// executable, never its folder (a candidate once read other candidates' sources and verdicts from there).
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
