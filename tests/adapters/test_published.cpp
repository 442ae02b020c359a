// Importing a published set (CUDA-L1's release files): rows parsed, missing kernels recorded, references
// matched to KernelBench, bad rows named by file, line and field; and `kj import` through the real binary.
#include "adapters/published/cuda_l1.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>
#include <string>

using namespace kj;
using namespace kj::test;
using nlohmann::json;

namespace {

std::string row(int level, int task, const json& ref, const json& kernel,
                const json& extra = json::object()) {
  json r{{"level_id", level}, {"task_id", task}, {"ref_code", ref}, {"custom_code", kernel}};
  r.update(extra);
  return r.dump() + "\n";
}

// A release file in CUDA-L1's shape over the test fixtures' level 1: an identical reference with a kernel, a
// reference that differs (no kernel: "None"), and one KernelBench does not have (kernel null).
std::filesystem::path release(const scratch_dir& dir) {
  const std::string add = read_file(fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py");
  const std::string linear = read_file(fixtures_dir() / "problems" / "level1" / "2_Linear_Tanh.py");
  const std::string kernel = read_file(fixtures_dir() / "candidates" / "basic" / "1_Scaled_Add.py");
  const auto file = dir / "h100.json";
  write_file(file, row(1, 1, add + "\n\n", kernel,
                       {{"score_default", 2.75},
                        {"score_torch_compile_default", 2.457},
                        {"score_cudnn", nullptr},
                        {"cuda_graph_code", add}}) +
                       row(1, 2, linear + "# changed\n", "None", {{"score_default", 1.5}}) +
                       row(2, 7, add, nullptr));
  return file;
}

} // namespace

TEST_CASE("a CUDA-L1 release file: kernels, missing ones and claims") {
  scratch_dir dir;
  const auto rows = adapters::read_cuda_l1(release(dir));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].kernel.has_value());
  CHECK(rows[0].claims == std::map<std::string, double>{{"eager", 2.75}, {"torch_compile", 2.457}});
  CHECK(rows[0].variants.count("cuda_graph_code") == 1);
  CHECK_FALSE(rows[1].kernel.has_value()); // the text "None"
  CHECK_FALSE(rows[2].kernel.has_value()); // null
  CHECK(rows[2].line == 3);
}

TEST_CASE("a bad release row is named by file, line and field") {
  scratch_dir dir;
  const auto check = [&](const std::string& text, const std::string& expected) {
    write_file(dir / "bad.json", text);
    try {
      adapters::read_cuda_l1(dir / "bad.json");
      FAIL("accepted: " << text);
    } catch (const adapters::import_error& e) {
      const std::string what = e.what();
      INFO(what);
      CHECK(what.find("bad.json:") != std::string::npos);
      CHECK(what.find(expected) != std::string::npos);
    }
  };
  check(row(1, 1, "x", "y") + "{not json\n", ":2: not a JSON object");
  check(row(0, 1, "x", "y"), "'level_id' is 0, expected an integer from 1 to 4");
  check(json{{"level_id", 1}, {"ref_code", "x"}}.dump(), "'task_id' is missing");
  check(row(1, 1, "", "y"), "'ref_code' is missing or empty");
  check(row(1, 1, "x", 5), "'custom_code' is number, expected Python source text or null");
  check(row(1, 1, "x", "y", {{"score_default", "fast"}}),
        "'score_default' is \"fast\", expected a positive number");
  check(row(1, 1, "x", "y") + row(1, 1, "x", "z"), ":2: level 1 task 1 is given again (first on line 1)");
  check("\n\n", "no rows");
  try {
    adapters::read_cuda_l1(dir / "absent.json");
    FAIL("an absent file was read");
  } catch (const adapters::import_error& e) {
    CHECK(std::string(e.what()).find("absent.json: cannot be read") != std::string::npos);
  }
}

TEST_CASE("kj import cuda-l1 writes a folder kj runs, matched to KernelBench, and never overwrites one") {
  scratch_dir dir;
  const auto file = release(dir);
  const auto out = dir / "imported";
  const auto r = run_kj({"import", "cuda-l1", file.string(), "--out", out.string(), "--kernelbench",
                         (fixtures_dir() / "problems").string()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("3 rows of CUDA-L1 (h100 GPU): 1 kernels, 2 rows without one") != std::string::npos);
  CHECK(r.out.find("1 identical, 1 differ (kept as given), 1 not in it") != std::string::npos);
  const json claims = json::parse(read_file(out / "claims.json"));
  CHECK(claims["gpu"] == "h100");
  CHECK(claims["rows"][0]["reference"] == "identical"); // trailing blank lines do not count
  CHECK(claims["rows"][0]["name"] == "Scaled_Add");
  CHECK(claims["rows"][0]["claims"]["eager"] == 2.75);
  CHECK(claims["rows"][1]["reference"] == "differs");
  CHECK(claims["rows"][1]["kernel"] == "missing");
  CHECK(claims["rows"][2]["reference"] == "not in KernelBench");
  CHECK(claims["rows"][2]["name"] == "Task_7");
  CHECK(read_file(out / "KernelBench" / "level1" / "2_Linear_Tanh.py").find("# changed") !=
        std::string::npos);
  CHECK(std::filesystem::exists(out / "candidates" / "level_1_problem_1_sample_0_kernel.py"));
  CHECK_FALSE(std::filesystem::exists(out / "candidates" / "level_1_problem_2_sample_0_kernel.py"));
  CHECK(std::filesystem::exists(out / "variants" / "cuda_graph_code" / "level_1_problem_1.py"));

  const auto again = run_kj({"import", "cuda-l1", file.string(), "--out", out.string()});
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("exists and is not empty") != std::string::npos);
  write_file(dir / "bad.json", "[1, 2]\n");
  const auto bad = run_kj({"import", "cuda-l1", (dir / "bad.json").string(), "--out", (dir / "o2").string()});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("bad.json:1: not a JSON object") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "o2")); // nothing written for a file that cannot be read

  write_file(dir / "empty-file", "");
  const auto to_file = run_kj({"import", "cuda-l1", file.string(), "--out", (dir / "empty-file").string()});
  CHECK(to_file.exit_code == 2);
  CHECK(to_file.err.find("is a file; kj import writes a new folder") != std::string::npos);
  const auto nowhere = run_kj({"import", "cuda-l1", file.string(), "--out", "/proc/kj-import-test"});
  CHECK(nowhere.exit_code == 2);
  CHECK(nowhere.err.find("--out /proc/kj-import-test: cannot be written") != std::string::npos);
  const auto folder = run_kj({"import", "cuda-l1", dir.path().string(), "--out", (dir / "o3").string()});
  CHECK(folder.exit_code == 2);
  CHECK(folder.err.find("is a folder") != std::string::npos);

  const auto claims_folder = run_kj({"claims", out.string(), "--db", (dir / "none.sqlite").string()});
  CHECK(claims_folder.exit_code == 2);
  CHECK(claims_folder.err.find("a folder was given, name its claims.json") != std::string::npos);
}
