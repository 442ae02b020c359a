// The verified problem set through the real binary: kj audit --json, kj verified build and show, then
// --problems verified in kj problems, kj run and kj results, each row marked with its problem's standing; a
// problem edited since its audit is "changed"; a bad set file or option is refused with its name.
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

json problem_named(const json& set, const std::string& name) {
  for (const auto& p : set["problems"])
    if (p["name"] == name) return p;
  FAIL("no " << name << " in the set");
  return {};
}

} // namespace

TEST_CASE("a set built from kj audit keeps its sound problems and marks the others in kj results") {
  scratch_dir dir;
  const fs::path problems = dir / "KernelBench";
  fs::copy(fixtures_dir() / "audit" / "problems", problems, fs::copy_options::recursive);
  const std::string db = (dir / "kj.sqlite").string(), cache = (dir / "cache").string();
  const auto audit =
      run_kj({"audit", "--device", "cpu", "--kernelbench", problems.string(), "--db",
              (dir / "audits.sqlite").string(), // the runs' DB holds no audit: marks from the set
              "--cache-dir", cache, "--json", (dir / "audit.json").string()},
             dir.path());
  INFO(audit.err);
  REQUIRE(audit.exit_code == 1); // two unsound problems, one broken
  write_file(dir / "public.json", R"([{"source": "PR #7", "claim": "constant", "url": "",
                                       "problems": [{"level": 1, "id": 4}, {"level": 1, "id": 1}]}])");
  const auto build = run_kj({"verified", "build", "--audit", "fp32=" + (dir / "audit.json").string(),
                             "--public", (dir / "public.json").string(), "--kernelbench", problems.string(),
                             "--version", "test.1", "-o", (dir / "set.json").string()});
  INFO(build.err);
  REQUIRE(build.exit_code == 0);
  const json set = json::parse(read_file(dir / "set.json"));
  REQUIRE(set["problems"].size() == 5);
  CHECK(problem_named(set, "Relu_Matmul")["audits"]["fp32"]["status"] == "sound");
  CHECK(problem_named(set, "Tiny_Scale")["audits"]["fp32"]["status"] == "weak");
  CHECK(problem_named(set, "Dropout_Train")["audits"]["fp32"]["status"] == "unsound");
  CHECK(problem_named(set, "Zero_Difference")["audits"]["fp32"]["status"] == "unsound");
  CHECK(problem_named(set, "Broken_Inputs")["audits"]["fp32"]["status"] == "error");
  CHECK(problem_named(set, "Zero_Difference")["public"][0]["agrees"] == true);
  CHECK(problem_named(set, "Relu_Matmul")["public"][0]["agrees"] == false);
  CHECK(problem_named(set, "Relu_Matmul")["sha256"].get<std::string>().size() == 64);

  const std::string set_file = (dir / "set.json").string();
  const auto show = run_kj({"verified", "show", "--verified-set", set_file});
  CHECK(has(show.out, "Zero_Difference"));
  CHECK(has(show.out, "constant reference"));
  CHECK(has(show.out, "public: PR #7 (agrees): constant"));
  CHECK_FALSE(has(show.out, "Relu_Matmul")); // sound: shown with --all only
  CHECK(has(run_kj({"verified", "show", "--verified-set", set_file, "--all"}).out, "Relu_Matmul"));

  const auto listed = run_kj({"problems", "--kernelbench", problems.string(), "--problems", "verified",
                              "--verified-set", set_file, "--no-shapes"});
  INFO(listed.err);
  CHECK(has(listed.out, "Relu_Matmul"));
  CHECK_FALSE(has(listed.out, "Tiny_Scale"));
  CHECK(has(listed.err,
            "--problems verified: 1 of 5 problems (verified set test.1 at fp32); left out: 1 error, "
            "2 unsound, 1 weak (kj verified show says why)"));

  // A run over problems 1-4 with problem 2 edited since the audit: 1 sound, 2 changed, 3 and 4 unsound.
  write_file(problems / "level1" / "2_Tiny_Scale.py",
             read_file(problems / "level1" / "2_Tiny_Scale.py") + "\n# edited after the audit\n");
  const auto run =
      run_kj({"run", "--device", "cpu", "--kernelbench", problems.string(), "--ids", "1-4", "--candidates",
              "identity", "--no-timing", "--no-strict", "--db", db, "--cache-dir", cache, "--run-id", "all"},
             dir.path());
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json rows =
      json::parse(run_kj({"results", "--db", db, "--format", "json", "--verified-set", set_file}).out);
  REQUIRE(rows.size() == 4);
  std::map<std::string, std::string> standing;
  for (const auto& r : rows)
    standing[r["problem"].get<std::string>()] = r["problem_verified"].get<std::string>();
  CHECK(standing["Relu_Matmul"] == "sound");
  CHECK(standing["Tiny_Scale"] == "changed");
  CHECK(standing["Dropout_Train"] == "unsound");
  CHECK(standing["Zero_Difference"] == "unsound");
  const auto table = run_kj({"results", "--db", db, "--verified-set", set_file, "-w"}).out;
  CHECK(has(table, "problem changed since the verified set audited it"));
  CHECK(has(table, "unsound problem, verified set test.1, fp32: constant reference"));
  const auto only = json::parse(run_kj({"results", "--db", db, "--format", "json", "--verified-set", set_file,
                                        "--problems", "verified"})
                                    .out);
  REQUIRE(only.size() == 1);
  CHECK(only[0]["problem"] == "Relu_Matmul");
  // A set in which none of the run's problems is sound leaves nothing: exit 2, as kj report and kj problems.
  write_file(dir / "empty.json", R"({"format": 1, "version": "e", "problems": []})");
  const auto none = run_kj(
      {"results", "--db", db, "--verified-set", (dir / "empty.json").string(), "--problems", "verified"});
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "none of a problem the verified set calls sound"));

  // kj run --problems verified judges only the sound one.
  const auto narrowed =
      run_kj({"run",      "--device",       "cpu",      "--kernelbench", problems.string(), "--ids",
              "1-4",      "--candidates",   "identity", "--no-timing",   "--no-strict",     "--db",
              db,         "--cache-dir",    cache,      "--run-id",      "verified",        "--problems",
              "verified", "--verified-set", set_file},
             dir.path());
  INFO(narrowed.err);
  REQUIRE(narrowed.exit_code == 0);
  CHECK(has(narrowed.err, "1 of 4 problems"));
  CHECK(json::parse(run_kj({"results", "--db", db, "--run", "verified", "--format", "json"}).out).size() ==
        1);
}

TEST_CASE("a bad verified set or option is refused by name, before anything runs") {
  scratch_dir dir;
  const fs::path problems = fixtures_dir() / "audit" / "problems";
  const auto absent = run_kj({"problems", "--kernelbench", problems.string(), "--problems", "verified",
                              "--verified-set", (dir / "absent.json").string()});
  CHECK(absent.exit_code == 2);
  CHECK(has(absent.err, "absent.json: cannot read the verified problem set"));
  write_file(dir / "bad.json", R"({"format": 1, "problems": []})");
  const auto bad = run_kj(
      {"results", "--db", (dir / "none.sqlite").string(), "--verified-set", (dir / "bad.json").string()});
  CHECK(bad.exit_code == 2);
  const auto word = run_kj({"problems", "--problems", "some"});
  CHECK(word.exit_code == 2);
  CHECK(has(word.err, "--problems"));
  write_file(dir / "empty.json", R"({"format": 1, "version": "e", "problems": []})");
  const auto none = run_kj({"problems", "--kernelbench", problems.string(), "--problems", "verified",
                            "--verified-set", (dir / "empty.json").string()});
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "none of the 5 selected problems is sound in the verified set e"));
  const auto audit_missing =
      run_kj({"verified", "build", "--audit", "fp32", "--version", "x", "-o", (dir / "o.json").string()});
  CHECK(audit_missing.exit_code == 2);
  CHECK(has(audit_missing.err, "expected PRECISION=FILE"));
}
