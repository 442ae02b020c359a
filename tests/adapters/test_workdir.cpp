// CUDA-Agent workdirs as candidates: one self-contained source, found in candidate folders, and (through the
// real `kj run` on the CPU) compiled as one extension and judged.
#include "adapters/candidates.hpp"
#include "adapters/workdir.hpp"
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <nlohmann/json.hpp>

using namespace kj;
using namespace kj::test;
namespace fs = std::filesystem;

namespace {

fs::path fixture_workdir() {
  return fixtures_dir() / "workdirs" / "level_1_problem_1_sample_0";
}

kb::problem scaled_add() {
  kb::problem p;
  p.level = 1, p.number = 1, p.file_name = "1_Scaled_Add.py", p.source = "class Model: pass\n";
  return p;
}

} // namespace

TEST_CASE("a workdir becomes one source: every C++ file embedded, the extension built, ModelNew appended") {
  const std::string source = adapters::workdir_candidate_source(fixture_workdir());
  for (const char* file : {"\"binding.cpp\"", "\"registry.h\"", "\"kernels/scaled_add.cpp\"",
                           "\"kernels/scaled_add_binding.cpp\""})
    CHECK(source.find(file) != std::string::npos);
  CHECK(source.find("_KJ_WITH_CUDA = False") != std::string::npos); // no .cu file: a CPU build
  CHECK(source.find("torch.utils.cpp_extension") != std::string::npos);
  CHECK(source.find("name=\"cuda_extension\"") != std::string::npos);
  CHECK(source.find(
            "# ---- model_new.py ----\nimport torch\nimport torch.nn as nn\n\nimport cuda_extension\n") !=
        std::string::npos);
  CHECK(source.find("model.py") == std::string::npos);

  // Content-addressed: the same files elsewhere give the same text; a changed file another.
  scratch_dir dir;
  fs::copy(fixture_workdir(), dir / "copy", fs::copy_options::recursive);
  CHECK(adapters::workdir_candidate_source(dir / "copy") == source);
  write_file(dir / "copy" / "kernels" / "scaled_add.cpp",
             read_file(dir / "copy" / "kernels" / "scaled_add.cpp") + "\n");
  CHECK(adapters::workdir_candidate_source(dir / "copy") != source);
}

TEST_CASE("workdir edge cases: future imports first, awkward file text, no sources") {
  scratch_dir dir;
  write_file(dir / "w" / "model_new.py", "from __future__ import annotations\nimport cuda_extension\n");
  write_file(dir / "w" / "kernels" / "k.cu", "// a \"\"\"quoted\"\"\" comment\n");
  const std::string source = adapters::workdir_candidate_source(dir / "w");
  CHECK(source.rfind("from __future__ import annotations\n# kerneljudge", 0) == 0);
  CHECK(source.find("_KJ_WITH_CUDA = True") != std::string::npos);
  // Text that a raw triple-quoted string cannot hold travels as an escaped string literal.
  CHECK(source.find(R"("// a \"\"\"quoted\"\"\" comment\n")") != std::string::npos);
  write_file(dir / "empty" / "model_new.py", "class ModelNew: pass\n");
  write_file(dir / "empty" / "kernels" / "only.h", "#pragma once\n");
  CHECK_THROWS_AS(adapters::workdir_candidate_source(dir / "empty"), kb::source_error);
  CHECK_THROWS_AS(adapters::workdir_candidate_source(dir / "missing"), kb::source_error);
}

TEST_CASE(
    "candidate folders hold workdirs beside files, and a folder that is itself a workdir names one problem") {
  const auto found = adapters::candidates_from_directory(fixtures_dir() / "workdirs", {scaled_add()});
  REQUIRE(found.candidates.size() == 1);
  CHECK(found.candidates[0].producer == "workdir");
  CHECK(found.candidates[0].sample == 0);
  CHECK(found.candidates[0].path.filename() == "level_1_problem_1_sample_0");
  const auto direct = adapters::candidates_from_directory(fixture_workdir(), {scaled_add()});
  REQUIRE(direct.candidates.size() == 1);
  CHECK(direct.candidates[0].source == found.candidates[0].source);
  kb::problem other = scaled_add();
  other.number = 2, other.file_name = "2_Other.py";
  // Its name picks the problem among several; an unnamed workdir needs exactly one selected problem.
  CHECK(adapters::candidates_from_directory(fixture_workdir(), {other, scaled_add()})
            .candidates[0]
            .problem_index == 1);
  scratch_dir dir;
  fs::copy(fixture_workdir(), dir / "my_attempt", fs::copy_options::recursive);
  CHECK(adapters::candidates_from_directory(dir / "my_attempt", {other}).candidates.size() == 1);
  CHECK_THROWS_AS(adapters::candidates_from_directory(dir / "my_attempt", {other, scaled_add()}),
                  kb::source_error);
}

TEST_CASE("kj run compiles a C++-only workdir as one extension and judges it correct") {
  scratch_dir dir;
  const char* shared_cache = std::getenv("KJ_CACHE_DIR");
  const fs::path cache = shared_cache && *shared_cache ? fs::path(shared_cache) : dir / "cache";
  const auto r = run_kj({"run", "--device", "cpu", "--problem",
                         (fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py").string(),
                         "--candidates", (fixtures_dir() / "workdirs").string(), "--no-timing", "--db",
                         (dir / "kj.sqlite").string(), "--cache-dir", cache.string(), "--run-id", "workdir"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  const auto rows = nlohmann::json::parse(results.out);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["producer"] == "workdirs"); // the folder's name
  CHECK(rows[0]["verdict"] == "correct");
  CHECK(rows[0]["strict_verdict"] == "pass");
}
