// Runs the real `kj run` over fixture candidates, one per failure mode, and checks each recorded verdict.
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

// The `# kj-expect: <verdict>` line that every fixture candidate starts with.
std::string expected_verdict(const fs::path& file) {
  static const std::regex pattern(R"(# kj-expect: (\w+))");
  std::smatch m;
  const std::string text = read_file(file);
  REQUIRE(std::regex_search(text, m, pattern));
  return m[1];
}

json results_json(const scratch_dir& dir, const std::string& run = "") {
  std::vector<std::string> args{"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"};
  if (!run.empty()) args.insert(args.end(), {"--run", run});
  const auto r = run_kj(args);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

// kj run on one problem file (CPU) with the candidates of dir/candidates and `options`; its one row.
json judge_one(const scratch_dir& dir, const fs::path& problem, std::vector<std::string> options) {
  std::vector<std::string> args{"run",
                                "--device",
                                "cpu",
                                "--problem",
                                problem.string(),
                                "--candidates",
                                (dir / "candidates").string(),
                                "--db",
                                (dir / "kj.sqlite").string(),
                                "--cache-dir",
                                (dir / "cache").string()};
  args.insert(args.end(), options.begin(), options.end());
  const auto r = run_kj(args, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json rows = results_json(dir);
  REQUIRE(rows.size() == 1);
  return rows[0];
}

} // namespace

TEST_CASE("kj run records the expected verdict for every failure mode of a candidate") {
  scratch_dir dir;
  const fs::path problems = fixtures_dir() / "problems" / "level1";
  const fs::path candidates = fixtures_dir() / "candidates" / "basic";
  const std::vector<std::string> args{"run",
                                      "--device",
                                      "cpu",
                                      "--problem",
                                      (problems / "1_Scaled_Add.py").string(),
                                      "--problem",
                                      (problems / "2_Linear_Tanh.py").string(),
                                      "--candidates",
                                      candidates.string(),
                                      "--timeout",
                                      "300",
                                      "--min-samples",
                                      "3",
                                      "--max-time-ms",
                                      "50",
                                      "--db",
                                      (dir / "kj.sqlite").string(),
                                      "--cache-dir",
                                      (dir / "cache").string(),
                                      "--run-id",
                                      "verdicts"};
  const auto r = run_kj(args, dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0); // failing candidates never fail the run

  std::map<std::string, std::string> expected;
  for (const auto& entry : fs::directory_iterator(candidates))
    expected[entry.path().filename().string()] = expected_verdict(entry.path());

  const json rows = results_json(dir);
  REQUIRE(rows.size() == expected.size());
  for (const auto& row : rows) {
    const std::string file = fs::path(row["candidate"].get<std::string>()).filename().string();
    INFO(file << ": " << row["error"].get<std::string>());
    CHECK(row["verdict"] == expected.at(file));
    if (row["verdict"] == "correct") {
      CHECK(row["candidate_median_ms"].is_number());
      CHECK(row["reference_median_ms"].is_number());
    } else {
      CHECK(!row["error"].get<std::string>().empty());
    }
  }
  // Errors say what happened, for the people reading them.
  for (const auto& row : rows) {
    const std::string file = fs::path(row["candidate"].get<std::string>()).filename().string();
    const std::string error = row["error"];
    if (file == "level_1_problem_1_sample_2_kernel.py") CHECK(error.find("SyntaxError") != std::string::npos);
    if (file == "level_1_problem_1_sample_3_kernel.py") CHECK(error.find("ModelNew") != std::string::npos);
    if (file == "level_1_problem_1_sample_4_kernel.py")
      CHECK(error.find("invalid configuration") != std::string::npos);
    if (file == "level_1_problem_1_sample_6_kernel.py")
      CHECK(error.find("exited with code 7") != std::string::npos);
    if (file == "level_1_problem_1_sample_7_kernel.py") CHECK(error.find("signal 11") != std::string::npos);
    if (file == "level_1_problem_1_sample_8_kernel.py")
      CHECK(error.find("shape mismatch") != std::string::npos);
    if (file == "level_1_problem_1_sample_10_kernel.py")
      CHECK(error.find("Error building") != std::string::npos);
    // sample 11 asks getpass for its user name (torch.compile does): under kj's sandbox identity, a uid
    // without a name in the password file, that is kj's to answer (exec::enter_identity), not a load_error
    if (file == "level_1_problem_1_sample_11_kernel.py") CHECK(error.find("getpwuid") == std::string::npos);
  }

  SECTION("the DB holds the raw trials and timing samples of the correct ones") {
    const auto info = run_kj({"db", "info", "--db", (dir / "kj.sqlite").string()});
    REQUIRE(info.exit_code == 0);
    CHECK(info.out.find("schema version  " + std::to_string(kj::db::schema_version)) != std::string::npos);
    CHECK(info.out.find("evaluations     13") != std::string::npos);
  }
  SECTION("resuming the same run id evaluates nothing twice") {
    const auto again = run_kj(args, dir.path()); // the same options: a resume with others is refused
    INFO(again.err);
    REQUIRE(again.exit_code == 0);
    CHECK(again.err.find("resuming run verdicts") != std::string::npos);
    CHECK(results_json(dir, "verdicts").size() == expected.size());
  }
}

TEST_CASE("a candidate that never returns is killed at the time limit and recorded as timeout") {
  scratch_dir dir;
  const auto r = run_kj({"run", "--device", "cpu", "--problem",
                         (fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py").string(),
                         "--candidates", (fixtures_dir() / "candidates" / "hang").string(), "--timeout", "15",
                         "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
                        dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json rows = results_json(dir);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "timeout");
  CHECK(rows[0]["error"].get<std::string>().find("time limit") != std::string::npos);
}

TEST_CASE("a problem without Model is a problem_error, not a candidate failure") {
  scratch_dir dir;
  const auto r =
      run_kj({"run", "--device", "cpu", "--problem",
              (fixtures_dir() / "problems" / "bad" / "1_No_Model.py").string(), "--candidates", "identity",
              "--no-timing", "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
             dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json rows = results_json(dir);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "problem_error");
  CHECK(rows[0]["error"].get<std::string>().find("no `Model` defined") != std::string::npos);
}

TEST_CASE("the reference failing while kj times it is the problem's error, never the candidate's") {
  scratch_dir dir;
  write_file(dir / "candidates" / "2_Fails_When_Timed.py", "import torch.nn as nn\n\n\n"
                                                           "class ModelNew(nn.Module):\n"
                                                           "    def forward(self, x):\n"
                                                           "        return x * 2.0\n");
  const json row = judge_one(dir, fixtures_dir() / "problems" / "bad" / "2_Fails_When_Timed.py",
                             {"--quick", "--no-strict"});
  CHECK(row["verdict"] == "problem_error");
  CHECK(row["error"].get<std::string>().find("fails after 8 calls") != std::string::npos);
  CHECK(row["error"].get<std::string>().find("while kj timed the reference") != std::string::npos);
}

TEST_CASE("a problem that needs what kj's sandbox denies is the problem's error, never the candidate's") {
  // Its get_inputs() reads a file of the user's home: kj's judge (outside the sandbox) draws it, the
  // candidate's process (HOME a scratch folder) cannot, and neither can a control with no candidate in it.
  scratch_dir dir;
  write_file(dir / "home" / "kj-scale.txt", "2.0\n");
  write_file(dir / "problems" / "1_Needs_Home.py",
             "import os\nimport torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
             "    def forward(self, x):\n        return x * 2.0\n\n\ndef get_inputs():\n"
             "    with open(os.path.join(os.path.expanduser('~'), 'kj-scale.txt')) as f:\n"
             "        scale = float(f.read())\n    return [torch.rand(16, 64) * scale]\n\n\n"
             "def get_init_inputs():\n    return []\n");
  write_file(dir / "candidates" / "1_Needs_Home.py",
             "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n"
             "        return x * 2.0\n");
  const char* home = std::getenv("HOME");
  const std::string saved = home ? home : "";
  ::setenv("HOME", (dir / "home").c_str(), 1);
  const json row = judge_one(dir, dir / "problems" / "1_Needs_Home.py", {"--no-timing", "--no-strict"});
  if (home)
    ::setenv("HOME", saved.c_str(), 1);
  else
    ::unsetenv("HOME");
  CHECK(row["verdict"] == "problem_error");
  CHECK(row["error"].get<std::string>().find("no candidate ran in") != std::string::npos);
  CHECK(row["error"].get<std::string>().find("kj-scale.txt") != std::string::npos);
}

TEST_CASE("two candidate files with the same source and sample are judged once, not a crash") {
  scratch_dir dir;
  const std::string source = read_file(fixtures_dir() / "candidates" / "basic" / "1_Scaled_Add.py");
  write_file(dir / "candidates" / "1_Scaled_Add.py", source);
  write_file(dir / "candidates" / "level_1_problem_1_sample_0_kernel.py", source);
  const auto r = run_kj({"run", "--device", "cpu", "--problem",
                         (fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py").string(),
                         "--candidates", (dir / "candidates").string(), "--no-timing", "--no-strict", "--db",
                         (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
                        dir.path());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("the same source and sample as") != std::string::npos);
  CHECK(r.err.find("already in this run are kept") == std::string::npos); // a fresh run keeps nothing
  const json rows = results_json(dir);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["verdict"] == "correct");
  CHECK(rows[0]["strict_verdict"] == ""); // --no-strict: no strict verdict, not a pass
  CHECK(r.out.find("strict pass") == std::string::npos);
}
