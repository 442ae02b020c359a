// A published set end to end on the CPU: kj import writes a folder, kj run judges it as it is, kj claims puts
// claim beside measurement.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <string>

using namespace kj::test;
using nlohmann::json;

TEST_CASE("a CUDA-L1 release imported, judged as it is, and its claims put beside the measurements") {
  scratch_dir dir;
  const std::string add = read_file(fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py");
  const std::string kernel = read_file(fixtures_dir() / "candidates" / "basic" / "1_Scaled_Add.py");
  const std::string wrong =
      "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def __init__(self, s):\n"
      "        super().__init__()\n\n    def forward(self, a, b):\n        return a + b\n";
  const auto row = [](int task, const std::string& ref, const json& code, double claim) {
    return json{{"level_id", 1},       {"task_id", task},        {"ref_code", ref},
                {"custom_code", code}, {"score_default", claim}, {"score_torch_compile_default", claim}}
               .dump() +
           "\n";
  };
  write_file(dir / "h100.json",
             row(1, add, kernel, 1.0) + row(2, add, wrong, 17.8) + row(3, add, "None", 2.0));
  const auto imported =
      run_kj({"import", "cuda-l1", (dir / "h100.json").string(), "--out", (dir / "l1").string()});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  const auto r =
      run_kj({"run", "--device", "cpu", "--kernelbench", (dir / "l1" / "KernelBench").string(),
              "--candidates", (dir / "l1" / "candidates").string(), "--quick", "--no-strict", "--run-id",
              "cuda-l1", "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
             dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto c = run_kj({"claims", (dir / "l1" / "claims.json").string(), "--db",
                         (dir / "kj.sqlite").string(), "--run", "cuda-l1", "--format", "json"});
  INFO(c.out << c.err);
  REQUIRE(c.exit_code == 0);
  const json rows = json::parse(c.out)["rows"];
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["verdict"] == "correct");
  CHECK(rows[0]["measured"]["eager"].is_number());
  CHECK(rows[1]["verdict"] == "incorrect");
  CHECK(rows[1]["explanation"].get<std::string>().starts_with("not counted correct: incorrect"));
  CHECK(rows[2]["explanation"].get<std::string>().starts_with("no kernel in the release"));
  // A rerun of one kernel in another run (after a fix in kj): named after the first, its evaluation replaces
  // the first run's for that kernel only.
  REQUIRE(run_kj({"run", "--device", "cpu", "--kernelbench", (dir / "l1" / "KernelBench").string(),
                  "--candidates", (dir / "l1" / "candidates").string(), "--ids", "1", "--no-timing",
                  "--no-strict", "--run-id", "cuda-l1-rerun", "--db", (dir / "kj.sqlite").string(),
                  "--cache-dir", (dir / "cache").string()},
                 dir.path())
              .exit_code == 0);
  const auto both =
      run_kj({"claims", (dir / "l1" / "claims.json").string(), "--db", (dir / "kj.sqlite").string(), "--run",
              "cuda-l1", "--run", "cuda-l1-rerun", "--format", "json"});
  INFO(both.out << both.err);
  REQUIRE(both.exit_code == 0);
  const json merged = json::parse(both.out);
  CHECK(merged["run"] == "cuda-l1+cuda-l1-rerun");
  CHECK(merged["rows"][0]["verdict"] == "correct");
  CHECK(merged["rows"][0]["measured"]["eager"].is_null()); // the rerun's, judged without timing
  CHECK(merged["rows"][1]["verdict"] == "incorrect");      // the first run's
  const auto table =
      run_kj({"claims", (dir / "l1" / "claims.json").string(), "--db", (dir / "kj.sqlite").string()});
  CHECK(table.out.find("per level") != std::string::npos);
  // A run that judged none of the release is named so, exit 2 (review 12: 250 rows of "not judged", exit 0).
  REQUIRE(run_kj({"run", "--device", "cpu", "--level", "1", "--ids", "2", "--candidates", "builtin:identity",
                  "--no-timing", "--run-id", "other", "--db", (dir / "kj.sqlite").string()},
                 dir.path())
              .exit_code == 0);
  const auto other = run_kj({"claims", (dir / "l1" / "claims.json").string(), "--db",
                             (dir / "kj.sqlite").string(), "--run", "other"});
  CHECK(other.exit_code == 2);
  CHECK(other.err.find("run other judged none of the release's kernels") != std::string::npos);
  const auto bad = run_kj({"claims", (dir / "h100.json").string(), "--db", (dir / "kj.sqlite").string()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("h100.json") != std::string::npos);
}
