// scripts/make_slow_candidates.py (the slower candidate set of kj compare's GPU acceptance): on the built-in
// suite it writes one candidate per timed problem, slows every third by the shares given, and an unslowed
// candidate computes exactly what the problem's Model computes (run here on the CPU with the build's torch).
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("make_slow_candidates.py writes identity-like candidates, every third one slowed") {
  scratch_dir dir;
  const auto problems = run_kj({"problems", "--level", "1", "--no-shapes", "--format", "json"});
  REQUIRE(problems.exit_code == 0);
  write_file(dir / "problems.json", problems.out);
  json results = json::array();
  for (const auto& p : json::parse(problems.out))
    if (p["id"] != 2) // one problem without a correct timing: skipped
      results.push_back({{"level", p["level"]},
                         {"problem_id", p["id"]},
                         {"verdict", "correct"},
                         {"candidate_median_ms", 2.0}});
  write_file(dir / "results.json", results.dump());
  const std::string python = KJ_TEST_PYTHON;
  const std::string command = python + " " + (source_dir() / "scripts" / "make_slow_candidates.py").string() +
                              " --problems " + (dir / "problems.json").string() + " --results " +
                              (dir / "results.json").string() + " --out " + (dir / "slow").string() + " > " +
                              (dir / "log").string() + " 2>&1";
  REQUIRE(std::system(command.c_str()) == 0);
  INFO(read_file(dir / "log"));
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir / "slow"))
    files += entry.path().extension() == ".py";
  CHECK(files == 5); // six level-1 problems, one without a timing
  const json slowed = json::parse(read_file(dir / "slow.slowed.json"));
  REQUIRE(slowed.size() == 2); // problems 1 and 5: every third of the five written
  CHECK(slowed[0]["problem_id"] == 1);
  CHECK(slowed[0]["slowdown"] == 0.05);
  CHECK(slowed[1]["slowdown"] == 0.10);
  CHECK(read_file(dir / "slow" / "level_1_problem_1_sample_0_kernel.py").find("_KJ_SLEEP_MS = 0.1") !=
        std::string::npos);

  // An unslowed candidate is the problem's own computation.
  const fs::path candidate = dir / "slow" / "level_1_problem_3_sample_0_kernel.py";
  REQUIRE(fs::exists(candidate));
  write_file(dir / "check.py", "import importlib.util, sys, torch\n"
                               "spec = importlib.util.spec_from_file_location('c', sys.argv[1])\n"
                               "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
                               "torch.manual_seed(0); ref = m.Model(*m.get_init_inputs())\n"
                               "torch.manual_seed(0); new = m.ModelNew(*m.get_init_inputs())\n"
                               "x = m.get_inputs()\n"
                               "assert torch.equal(ref(*x), new(*x)) and new._kj_cycles == 0\n"
                               "print('same')\n");
  const std::string check = python + " " + (dir / "check.py").string() + " " + candidate.string() + " > " +
                            (dir / "check.log").string() + " 2>&1";
  const int status = std::system(check.c_str());
  INFO(read_file(dir / "check.log"));
  CHECK(status == 0);
  CHECK(read_file(dir / "check.log").find("same") != std::string::npos);
}
