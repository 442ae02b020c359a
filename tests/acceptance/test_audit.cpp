// `kj audit` through the real binary: problems with known flaws (a stochastic reference, a constant one,
// outputs below KernelBench's atol, inputs that cannot be drawn) beside a sound one, and the built-in suite
// against its expected audit (tests/fixtures/audit/builtin_expected.json).
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

json by_name(const json& rows, const std::string& name) {
  for (const auto& r : rows)
    if (r["name"] == name) return r;
  FAIL("no audit of " << name);
  return {};
}

} // namespace

TEST_CASE("kj audit finds a stochastic and a constant reference, tiny outputs and a broken problem") {
  scratch_dir dir;
  const fs::path problems = fixtures_dir() / "audit" / "problems";
  const auto r =
      run_kj({"audit", "--device", "cpu", "--kernelbench", problems.string(), "--db",
              (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string(), "--format", "json"},
             dir.path());
  INFO(r.err);
  CHECK(r.exit_code == 1); // unsound problems
  const json rows = json::parse(r.out);
  REQUIRE(rows.size() == 5);

  const json sound = by_name(rows, "Relu_Matmul");
  CHECK_FALSE(sound["unsound"].get<bool>());
  for (const char* n : {"zeros", "mean"}) {
    CHECK(sound["nulls"][n]["compatible"] == false);
    CHECK(sound["nulls"][n]["strict"] == false);
  }
  CHECK(sound["nulls"]["tf32"]["strict"].is_null()); // no TF32 on the CPU
  CHECK(sound["tolerance_use"].get<double>() < 1.0);

  const json tiny = by_name(rows, "Tiny_Scale");
  CHECK_FALSE(tiny["unsound"].get<bool>());
  CHECK(tiny["nulls"]["zeros"]["compatible"] == true);
  CHECK(tiny["nulls"]["zeros"]["strict"] == false);
  CHECK(tiny["notes"].get<std::string>().find("KernelBench's rule accepts 'zeros'") != std::string::npos);

  const json dropout = by_name(rows, "Dropout_Train");
  CHECK(dropout["unsound"] == true);
  CHECK(dropout["stochastic"] == true);

  const json zero = by_name(rows, "Zero_Difference");
  CHECK(zero["unsound"] == true);
  CHECK(zero["constant_reference"] == true);
  CHECK(zero["nulls"]["zeros"]["compatible"] == true);

  const json broken = by_name(rows, "Broken_Inputs");
  CHECK(broken["error"].get<std::string>().find("cannot be drawn") != std::string::npos);

  // Stored: one row per problem (the newest audit of each); the table names each verdict.
  const auto stored = kj::db::store::open_read_only(dir / "kj.sqlite").latest_problem_audits();
  CHECK(stored.size() == 5);
  CHECK(std::count_if(stored.begin(), stored.end(), [](const auto& a) { return a.unsound; }) == 2);
  const auto table = run_kj({"audit", "--device", "cpu", "--kernelbench", problems.string(), "--ids", "1-2",
                             "--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()},
                            dir.path());
  CHECK(table.exit_code == 0); // both sound
  CHECK(table.out.find("2 problems audited: 2 sound, 0 unsound") != std::string::npos);

  // A result on an unsound problem says so, in kj results and in the report's problems section.
  const auto run = run_kj({"run", "--device", "cpu", "--kernelbench", problems.string(), "--ids", "4",
                           "--candidates", "identity", "--no-timing", "--db", (dir / "kj.sqlite").string(),
                           "--cache-dir", (dir / "cache").string(), "--run-id", "on-unsound"},
                          dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto results = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  const json result = json::parse(results.out).at(0);
  CHECK(result["unsound_problem"].get<std::string>().find("constant reference") != std::string::npos);
  const auto text = run_kj({"results", "--db", (dir / "kj.sqlite").string()});
  CHECK(text.out.find("unsound problem (kj audit)") != std::string::npos);
  const auto report =
      run_kj({"report", "--db", (dir / "kj.sqlite").string(), "-o", (dir / "report").string()});
  REQUIRE(report.exit_code == 0);
  CHECK(read_file(dir / "report" / "index.html").find("unsound problem") != std::string::npos);

  const auto missing = run_kj(
      {"audit", "--problem", (dir / "absent.py").string(), "--db", (dir / "kj.sqlite").string()}, dir.path());
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("absent.py") != std::string::npos);
}

TEST_CASE("kj audit on the built-in suite finds what its expectation file says, problem by problem") {
  scratch_dir dir;
  const auto r = run_kj({"audit", "--device", "cpu", "--db", (dir / "kj.sqlite").string(), "--cache-dir",
                         (dir / "cache").string(), "--format", "json"},
                        dir.path());
  INFO(r.err);
  const json rows = json::parse(r.out);
  const json expected = json::parse(read_file(fixtures_dir() / "audit" / "builtin_expected.json"));
  REQUIRE(rows.size() == expected.at("problems").size());
  bool any_unsound = false;
  for (const auto& row : rows) {
    const std::string key =
        "L" + std::to_string(row["level"].get<int>()) + "/" + row["name"].get<std::string>();
    INFO(key << ": " << row.dump());
    REQUIRE(expected["problems"].contains(key));
    const json& e = expected["problems"][key];
    CHECK(row["error"] == "");
    CHECK(row["unsound"] == e.at("unsound"));
    CHECK(row["stochastic"] == e.at("stochastic"));
    for (const auto& [null, accepted] : e.at("compatible_accepts").items())
      CHECK(row["nulls"][null]["compatible"] == accepted);
    for (const char* n : {"zeros", "mean", "input"})
      CHECK(row["nulls"][n]["strict"] != true); // no built-in problem lets a null candidate pass strict
    any_unsound = any_unsound || row["unsound"].get<bool>();
  }
  CHECK(r.exit_code == (any_unsound ? 1 : 0));
}
