// Kernels written the way LLMs write them (tests/fixtures/llm_style, by a helper that never read kj's code):
// a subset small enough for CI of the name-collision corpus, built in parallel, and the multi-output, dtype
// and torch-fallback candidates. Expectations come from the corpus's manifest, and kj's own rules where they
// differ.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using kj::test::fixtures_dir;
using kj::test::run_kj;
using kj::test::scratch_dir;
using nlohmann::json;

namespace {

const fs::path corpus = fixtures_dir() / "llm_style";

json manifest_entry(const std::string& file) {
  static const json manifest = json::parse(kj::test::read_file(corpus / "manifest.json"));
  for (const auto& c : manifest.at("candidates"))
    if (c.at("file") == file) return c;
  FAIL("manifest.json has no entry for " << file);
  return {};
}

// Copies corpus files into one candidates folder.
fs::path gather(const scratch_dir& dir, const std::vector<std::string>& files) {
  const fs::path out = dir / "candidates";
  fs::create_directories(out);
  for (const auto& f : files)
    fs::copy_file(corpus / f, out / fs::path(f).filename());
  return out;
}

std::map<std::string, json> rows_by_file(const fs::path& db, const std::string& run) {
  const auto results = run_kj({"results", "--db", db.string(), "--run", run, "--format", "json"});
  REQUIRE(results.exit_code == 0);
  std::map<std::string, json> rows;
  for (const auto& row : json::parse(results.out))
    rows[fs::path(row.at("candidate").get<std::string>()).filename().string()] = row;
  return rows;
}

std::string cache_dir(const scratch_dir& dir) {
  const char* shared = std::getenv("KJ_CACHE_DIR");
  return shared && *shared ? shared : (dir / "cache").string();
}

} // namespace

TEST_CASE("same-named extensions with different code, built in parallel, are each judged on their own code") {
  // fused_ops: L2 1 sample 0 (right) and sample 1 (missing the bias) share the function and its signature,
  // as do L1 2 and L1 4 (`fused_op_forward(x)`): loading another candidate's build would be silent.
  const std::vector<std::string> files = {"name_collision/cpu/level_1_problem_2_sample_0_kernel.py",
                                          "name_collision/cpu/level_1_problem_4_sample_0_kernel.py",
                                          "name_collision/cpu/level_2_problem_1_sample_0_kernel.py",
                                          "name_collision/cpu/level_2_problem_1_sample_1_kernel.py"};
  scratch_dir dir;
  const fs::path candidates = gather(dir, files);
  const fs::path db = dir / "kj.sqlite";
  const std::string cache = (dir / "own-cache").string(); // fresh: every file really compiles here
  auto run = [&](const std::string& id) {
    return run_kj({"run", "--device", "cpu", "--builtin", "--candidates", candidates.string(), "--no-timing",
                   "--build-jobs", "2", "--db", db.string(), "--cache-dir", cache, "--run-id", id});
  };
  const auto first = run("first");
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.err.find("compiling 4 candidates (2 at a time)") != std::string::npos);
  auto rows = rows_by_file(db, "first");
  REQUIRE(rows.size() == files.size());
  for (const auto& f : files) {
    const json expected = manifest_entry(f);
    const json& row = rows.at(fs::path(f).filename().string());
    INFO(f << ": " << row.dump());
    CHECK(row.at("verdict") == expected.at("compatible"));
    CHECK(row.at("strict_verdict") == expected.at("strict"));
  }
  // Judging the same sources again compiles nothing and gives the same verdicts.
  const auto again = run("again");
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(again.err.find("4 candidates were built before") != std::string::npos);
  CHECK(again.err.find("compiling") == std::string::npos);
  const auto rows_again = rows_by_file(db, "again");
  for (const auto& [file, row] : rows) {
    CHECK(rows_again.at(file).at("verdict") == row.at("verdict"));
    CHECK(rows_again.at(file).at("strict_verdict") == row.at("strict_verdict"));
  }
}

TEST_CASE("every output of a tuple is compared, dtypes must match, and a torch fallback is reported") {
  scratch_dir dir;
  const fs::path candidates = gather(dir, {"realistic/cpu/level_1_problem_101_sample_0_kernel.py",
                                           "realistic/cpu/level_1_problem_101_sample_1_kernel.py",
                                           "realistic/cpu/level_1_problem_102_sample_1_kernel.py",
                                           "realistic/cpu/level_2_problem_3_sample_1_kernel.py"});
  const fs::path problems = corpus / "problems" / "level1";
  const fs::path db = dir / "kj.sqlite";
  const auto r =
      run_kj({"run",
              "--device",
              "cpu",
              "--problem",
              (problems / "101_Max_Values_Indices.py").string(),
              "--problem",
              (problems / "102_Argmax_Int64.py").string(),
              "--problem",
              (kj::test::source_dir() / "kernelbench/suite/level2/3_Gemm_Scale_Softmax.py").string(),
              "--candidates",
              candidates.string(),
              "--no-timing",
              "--build-jobs",
              "2",
              "--db",
              db.string(),
              "--cache-dir",
              cache_dir(dir),
              "--run-id",
              "gaps"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = rows_by_file(db, "gaps");
  REQUIRE(rows.size() == 4);
  // (values, indices), both right: correct under kj (KernelBench itself fails every candidate of a tuple
  // problem, since it reads `.shape` of the reference's tuple: docs/methodology.md).
  const json& both_right = rows.at("level_1_problem_101_sample_0_kernel.py");
  CHECK(both_right.at("verdict") == "correct");
  CHECK(both_right.at("strict_verdict") == "pass");
  // Values right, indices wrong: the second output decides.
  const json& second_wrong = rows.at("level_1_problem_101_sample_1_kernel.py");
  CHECK(second_wrong.at("verdict") == "incorrect");
  CHECK(second_wrong.at("strict_verdict") == "fail");
  // int32 indices where the reference gives int64, with the same values.
  const json& narrow = rows.at("level_1_problem_102_sample_1_kernel.py");
  CHECK(narrow.at("verdict") == "incorrect");
  CHECK(narrow.at("error").get<std::string>().find("int64") != std::string::npos);
  // No extension at all: right, and said to be torch's own work.
  const json& fallback = rows.at("level_2_problem_3_sample_1_kernel.py");
  CHECK(fallback.at("verdict") == "correct");
  CHECK(fallback.at("findings").get<std::string>().find("torch_fallback") != std::string::npos);
}
