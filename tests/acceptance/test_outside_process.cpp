// The outside-process corpus (tests/fixtures/outside_process): one attack per class of the trust issue's
// red-team findings, each beside the honest bystander judged after it, through the real `kj` on the CPU. An
// attack must gain nothing (its manifest entry), the bystander keeps its verdict and a speedup within noise.
#include "engine/exec/build_cache.hpp"
#include "tests/acceptance/hostile_checks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

fs::path outside_corpus() {
  return kj::test::fixtures_dir() / "outside_process";
}

const std::string k_bystander = "cpu/level_3_problem_1_sample_49_kernel.py";
const std::string k_victim = "cpu/level_1_problem_4_sample_48_kernel.py";

void run_class(const std::string& attack) {
  kj::test::hostile::run_and_check("cpu", outside_corpus(), {attack, k_bystander});
}

// Every compiled extension under the cache's builds, with its build folder.
std::vector<std::pair<fs::path, fs::path>> cached_libraries(const fs::path& cache) {
  std::vector<std::pair<fs::path, fs::path>> out;
  for (const auto& entry : fs::recursive_directory_iterator(cache / "builds"))
    if (entry.path().extension() == ".so") {
      fs::path folder = entry.path();
      while (folder.has_parent_path() && folder.filename() != "ext")
        folder = folder.parent_path();
      out.emplace_back(entry.path(), folder.parent_path());
    }
  return out;
}

} // namespace

TEST_CASE("class 1: a candidate can lower no limit, priority or CPU of kj's processes or another job's") {
  run_class("cpu/level_1_problem_1_sample_40_kernel.py");
}

TEST_CASE("class 2: a daemon a build step starts dies with its job and slows no later candidate") {
  run_class("cpu/level_1_problem_2_sample_41_kernel.py");
}

TEST_CASE("class 3: parallel builds cannot reach each other, and a damaged cached build is built again") {
  kj::test::scratch_dir dir;
  const fs::path cache = dir / "cache";
  // 1. The attack's build step watches for 45 s while the victim's extension compiles beside it.
  kj::test::hostile::run_and_check("cpu", outside_corpus(), {"cpu/level_1_problem_3_sample_42_kernel.py", k_victim},
                                   {}, cache);
  const auto libraries = cached_libraries(cache);
  REQUIRE(libraries.size() == 1);
  // 2. The cached library damaged after kj built it, and its recorded content made to match (a poisoning that
  // also rewrote the record, or a cache from a kj without the hash): the runner cannot load it, kj builds it
  // once more and the verdict is the candidate's own, never a load_error.
  const auto& [library, folder] = libraries.front();
  std::ofstream(library, std::ios::binary | std::ios::trunc) << "not an ELF file";
  const fs::path status = folder / "status.json";
  nlohmann::json record = nlohmann::json::parse(kj::test::read_file(status));
  record["content"] = kj::exec::build_content(folder);
  kj::test::write_file(status, record.dump());
  kj::test::hostile::run_and_check("cpu", outside_corpus(), {k_victim}, {}, cache);
  CHECK(kj::test::read_file(library).find("not an ELF file") == std::string::npos); // built again
}

TEST_CASE("class 4: samples a proxy on the runner's socket rewrites are charged back by the judge's clock") {
  run_class("cpu/level_1_problem_1_sample_43_kernel.py");
}

TEST_CASE("class 5: a candidate cannot know a timed call's inputs before the judge prepares that call") {
  run_class("cpu/level_1_problem_1_sample_44_kernel.py");
}

TEST_CASE("class 6: timed calls look like checked ones, and their outputs meet the strict tolerance") {
  run_class("cpu/level_1_problem_1_sample_45_kernel.py");
}

TEST_CASE(
    "class 7: a candidate cannot reach the runner its warm judge started ahead for the next candidate") {
  kj::test::hostile::run_and_check(
      "cpu", outside_corpus(),
      {"cpu/level_1_problem_1_sample_50_kernel.py", "cpu/level_1_problem_1_sample_51_kernel.py"});
}
