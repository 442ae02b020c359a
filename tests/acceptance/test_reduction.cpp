// The strict verdict stands on its own rule (docs/methodology.md, "Strict tolerance"): honest kernels that
// sum a long reduction in another order pass it, even where KernelBench's fixed 1e-4 rejects them;
// lower-precision ones fail it. And a problem's own fault is never the candidate's.
#include "tests/support/catch_compat.hpp"
#include "tests/support/corpus.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <regex>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

TEST_CASE("long reductions summed in another honest order pass strict, and bf16 and TF32 ones fail it") {
  scratch_dir dir;
  const fs::path root = fixtures_dir() / "reduction";
  const auto r =
      run_kj({"run", "--device", "cpu", "--kernelbench", (root / "problems").string(), "--candidates",
              (root / "candidates").string(), "--no-timing", "--db", (dir / "kj.sqlite").string(),
              "--cache-dir", (dir / "cache").string(), "--run-id", "orders"},
             dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const corpus_counts counts = check_corpus_results(root, dir / "kj.sqlite");
  CHECK(counts.honest == 3);
  CHECK(counts.bad == 2);

  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  REQUIRE(results.exit_code == 0);
  int rejected_only_by_tolerance = 0;
  for (const auto& row : json::parse(results.out)) {
    const std::string text = read_file(row["candidate"].get<std::string>());
    std::smatch m;
    static const std::regex reason("# kj-reason: (\\w+)");
    if (std::regex_search(text, m, reason)) CHECK(row["reason"] == m[1].str());
    if (row["verdict"] == "incorrect") CHECK(row["reason"] == "tolerance"); // never shape, dtype, structure
    rejected_only_by_tolerance += row["verdict"] == "incorrect" && row["strict_verdict"] == "pass";
  }
  // KernelBench's 1e-4 rejects an honest order somewhere among the matrix products' 5 x 256 outputs.
  CHECK(rejected_only_by_tolerance >= 1);
  const auto table = run_kj({"results", "--db", (dir / "kj.sqlite").string()});
  CHECK(table.out.find("incorrect (tolerance)") != std::string::npos);
}

TEST_CASE("a problem whose get_inputs raises is a problem_error, not the candidate's runtime_error") {
  scratch_dir dir;
  fs::create_directories(dir / "kb" / "level1");
  write_file(dir / "kb" / "level1" / "1_Broken_Inputs.py", R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    raise ValueError("this problem's inputs cannot be drawn")


def get_init_inputs():
    return []
)");
  const auto r =
      run_kj({"run", "--device", "cpu", "--kernelbench", (dir / "kb").string(), "--candidates", "identity",
              "--no-timing", "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
             dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  const json rows = json::parse(results.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "problem_error");
  CHECK(rows[0]["error"].get<std::string>().find("get_inputs() raised") != std::string::npos);
  CHECK(rows[0]["error"].get<std::string>().find("cannot be drawn") != std::string::npos);
}
