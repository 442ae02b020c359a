// Baselines through the real `kj` on the CPU: `kj baselines` over the built-in suite (eager and
// torch.compile default), the cache and its key, `kj run --baselines`, failures recorded with their reasons,
// and KernelBench JSONs imported and shown beside our numbers.
#include "db/store.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <nlohmann/json.hpp>

using nlohmann::json;
namespace fs = std::filesystem;
using namespace kj::test;

namespace {

command_result kj_in(const scratch_dir& dir, std::vector<std::string> args) {
  args.insert(args.end(), {"--db", (dir / "kj.sqlite").string(), "--cache-dir", (dir / "cache").string()});
  return run_kj(args, dir.path());
}

std::vector<kj::db::baseline_record> measured(const scratch_dir& dir) {
  auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  std::vector<kj::db::baseline_record> rows;
  for (auto& b : store.baselines())
    if (b.origin == "measured") rows.push_back(std::move(b));
  return rows;
}

const kj::db::baseline_record& row_of(const std::vector<kj::db::baseline_record>& rows,
                                      const std::string& file, const std::string& mode) {
  for (const auto& r : rows)
    if (r.file_name == file && r.mode == mode) return r;
  FAIL("no baseline for " << file << " " << mode);
  return rows.front();
}

// On a loaded host (CI runs two tests at once) the host probe may see the machine's speed move by more than
// 10% across the candidate's and the reference's rounds: kj then credits no speedup against any baseline (the
// timing is kept, marked untrusted). Such a row is checked for exactly that; the others for their baselines.
bool host_moved(const json& row) {
  INFO(row.dump());
  if (row.value("untrusted", std::string()).find("host's speed moved") == std::string::npos) return false;
  CHECK(row["baseline_ms"].empty());
  CHECK(row["speedup"].is_null());
  return true;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

json results_of(const scratch_dir& dir, const std::string& run) {
  const auto r = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--run", run, "--format", "json"});
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

} // namespace

TEST_CASE("kj baselines measures level 1 of the built-in suite once, then answers from the cache") {
  scratch_dir dir;
  // Level 1 only: each problem's Inductor compile costs CI 10-20 s, and levels 2 and 3 take the same path.
  const std::vector<std::string> args{
      "baselines", "--device", "cpu",           "--modes", "eager,compile-default",
      "--level",   "1",        "--max-time-ms", "200"};
  const auto first = kj_in(dir, args);
  INFO(first.out << first.err);
  REQUIRE(first.exit_code == 0);
  CHECK(first.out.find("total wall time") != std::string::npos);

  const auto rows = measured(dir);
  REQUIRE(rows.size() == 12); // 6 built-in level-1 problems x 2 modes
  for (const auto& b : rows) {
    INFO(b.file_name << " " << b.mode << ": " << b.status << " " << b.error);
    CHECK(b.status == "ok");
    CHECK(b.method == "robust");
    CHECK(b.samples_ms.empty()); // baselines() lists rows without their samples
    CHECK(b.median_ms.value_or(0) > 0);
    CHECK(b.stack_id != 0);
    CHECK(b.problem_id != 0);
    const json params = json::parse(b.params_json);
    CHECK(params["matches_eager"]["passed"] == true);
    if (b.mode == "compile-default") {
      CHECK(b.compile_s.value_or(0) > 0);      // the cold compile of the parallel pass
      CHECK(b.warm_compile_s.value_or(0) > 0); // again in the timing worker, from the Inductor cache
    } else {
      CHECK_FALSE(b.compile_s.has_value());
    }
  }

  const auto second = kj_in(dir, args);
  INFO(second.out << second.err);
  REQUIRE(second.exit_code == 0);
  CHECK(count(second.out, "(cached)") == 12);
  CHECK(second.err.find("compiling") == std::string::npos);
  CHECK(measured(dir).size() == 12);

  std::vector<std::string> refresh = args;
  refresh.insert(refresh.end(), {"--ids", "2", "--refresh-baselines"});
  const auto third = kj_in(dir, refresh);
  INFO(third.out << third.err);
  REQUIRE(third.exit_code == 0);
  CHECK(count(third.out, "(cached)") == 0);
  CHECK(measured(dir).size() == 14); // the old rows are kept; the newer ones answer later lookups
}

TEST_CASE(
    "kj run compares with the cached baselines whose key matches, and measures missing ones on request") {
  scratch_dir dir;
  const std::vector<std::string> run{"run",   "--device", "cpu",          "--level",  "1",
                                     "--ids", "1-2",      "--candidates", "identity", "--no-strict"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = run;
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = kj_in(dir, args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };

  with({"--run-id", "measure", "--max-time-ms", "200", "--baselines", "compile-default"});
  REQUIRE(measured(dir).size() == 2);
  for (const auto& row : results_of(dir, "measure")) {
    if (host_moved(row)) continue;
    INFO(row.dump());
    REQUIRE(row["baseline_ms"].contains("eager"));
    REQUIRE(row["baseline_ms"].contains("compile-default"));
    CHECK(row["speedups"]["compile-default"].get<double>() ==
          Approx(row["baseline_ms"]["compile-default"].get<double>() /
                 row["candidate_median_ms"].get<double>()));
    const std::string best = row["best_baseline"];
    CHECK((best == "eager" || best == "compile-default"));
    CHECK(row["speedup_best"].get<double>() ==
          Approx(std::min(row["speedups"]["eager"].get<double>(),
                          row["speedups"]["compile-default"].get<double>())));
  }

  with({"--run-id", "cached", "--max-time-ms", "200"}); // default --baselines cached
  CHECK(measured(dir).size() == 2);
  for (const auto& row : results_of(dir, "cached"))
    if (!host_moved(row)) CHECK(row["baseline_ms"].contains("compile-default"));

  with({"--run-id", "other-timing", "--max-time-ms", "250"}); // another key: no cached baseline applies
  for (const auto& row : results_of(dir, "other-timing")) {
    if (host_moved(row)) continue;
    INFO(row.dump());
    CHECK_FALSE(row["baseline_ms"].contains("compile-default"));
    CHECK(row["best_baseline"] == "eager");
  }

  with({"--run-id", "none", "--max-time-ms", "200", "--baselines", "none"});
  for (const auto& row : results_of(dir, "none"))
    if (!host_moved(row)) CHECK(row["baseline_ms"].size() == 1);

  std::vector<std::string> bad = run;
  bad.insert(bad.end(), {"--baselines", "compile-default,max_autotune"});
  const auto r = kj_in(dir, bad);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("unknown baseline mode 'max_autotune'") != std::string::npos);
}

TEST_CASE("baseline failures are recorded with their reasons") {
  scratch_dir dir;
  const fs::path problems = fixtures_dir() / "baselines" / "level1";
  const auto r = kj_in(dir, {"baselines", "--device", "cpu", "--modes", "eager,compile-default",
                             "--max-time-ms", "100", "--problem", (problems / "1_Opaque_Op.py").string(),
                             "--problem", (problems / "2_Forward_Raises.py").string()});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto rows = measured(dir);
  REQUIRE(rows.size() == 4);

  CHECK(row_of(rows, "1_Opaque_Op.py", "eager").status == "ok");
  const auto& opaque = row_of(rows, "1_Opaque_Op.py", "compile-default");
  CHECK(opaque.status == "compile_error");
  CHECK(opaque.error.find("torch.compile (compile-default) failed") != std::string::npos);
  CHECK_FALSE(opaque.median_ms.has_value()); // never timed
  for (const char* mode : {"eager", "compile-default"}) {
    const auto& raises = row_of(rows, "2_Forward_Raises.py", mode);
    CHECK(raises.status == "runtime_error");
    CHECK(raises.error.find("this reference is broken on purpose") != std::string::npos);
  }
  CHECK(r.out.find("2 compile_error") == std::string::npos); // one compile error, one runtime error
  CHECK(r.out.find("1 compile_error, 1 runtime_error") != std::string::npos);

  // Cached failures are answers too; a timeout is retried under a longer limit.
  const auto again =
      kj_in(dir, {"baselines", "--device", "cpu", "--modes", "eager,compile-default", "--max-time-ms", "100",
                  "--problem", (problems / "1_Opaque_Op.py").string()});
  CHECK(count(again.out, "(cached)") == 2);

  const fs::path scaled = fixtures_dir() / "problems" / "level1" / "1_Scaled_Add.py";
  const auto slow = kj_in(dir, {"baselines", "--device", "cpu", "--modes", "compile-default", "--timeout",
                                "1", "--problem", scaled.string()});
  INFO(slow.out << slow.err);
  REQUIRE(slow.exit_code == 0);
  CHECK(row_of(measured(dir), "1_Scaled_Add.py", "compile-default").status == "timeout");
  const auto retried = kj_in(dir, {"baselines", "--device", "cpu", "--modes", "compile-default",
                                   "--max-time-ms", "100", "--problem", scaled.string()});
  INFO(retried.out << retried.err);
  CHECK(count(retried.out, "(cached)") == 0);
}

TEST_CASE("bad input to kj baselines is refused before anything runs") {
  scratch_dir dir;
  auto modes = kj_in(dir, {"baselines", "--modes", "eager,fastest"});
  CHECK(modes.exit_code == 2);
  CHECK(modes.err.find("unknown baseline mode 'fastest'") != std::string::npos);
  auto missing = kj_in(dir, {"baselines", "--import", (dir / "nowhere").string()});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nowhere: no such file or folder") != std::string::npos);
}

TEST_CASE("imported KernelBench timings are stored and shown beside our own") {
  scratch_dir dir;
  const auto imported =
      kj_in(dir, {"baselines", "--import", (fixtures_dir() / "baselines" / "kb_timing").string()});
  INFO(imported.out << imported.err);
  REQUIRE(imported.exit_code == 0);
  CHECK(imported.out.find("imported 4 rows from 2 files") != std::string::npos);

  const auto r = kj_in(dir, {"baselines", "--device", "cpu", "--level", "1", "--ids", "1", "--modes", "eager",
                             "--max-time-ms", "100"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("[H100_fixture 1.25 ms]") != std::string::npos);
}

TEST_CASE("a candidate computing in bf16 is also compared with the eager baseline cached at bf16") {
  scratch_dir dir;
  const std::string problems = (fixtures_dir() / "numerics").string();
  const std::vector<std::string> where{"--device", "cpu", "--kernelbench", problems, "--kb-version",  "v0",
                                       "--level",  "1",   "--ids",         "1",      "--max-time-ms", "200"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    return kj_in(dir, args);
  };
  const auto baselines = with({"baselines", "--modes", "eager", "--precision", "bf16"});
  INFO(baselines.err);
  REQUIRE(baselines.exit_code == 0);
  const auto run = with({"run", "--candidates", problems + "/candidates", "--no-strict", "--run-id", "bf16"});
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const json rows = results_of(dir, "bf16");
  REQUIRE(rows.size() == 1);
  const json& row = rows[0];
  INFO(row.dump());
  CHECK(row["verdict"] == "correct"); // within v0's 1e-2
  CHECK(row["findings"].get<std::string>().find("lower_precision") != std::string::npos);
  CHECK(row["numerics"] == "bf16");
  if (host_moved(row)) return;
  REQUIRE(row["speedup_matched"].is_object());
  CHECK(row["speedup_matched"]["baseline"] == "eager-bf16");
  CHECK(
      row["speedup_matched"]["speedup"].get<double>() ==
      Approx(row["speedup_matched"]["baseline_ms"].get<double>() / row["candidate_median_ms"].get<double>()));
  CHECK(row["speedups"].contains("eager")); // the run's fp32 speedup stays, and stays the one counted
  CHECK_FALSE(row["speedups"].contains("eager-bf16"));
  CHECK(row["best_baseline"] == "eager");
  const auto verbose =
      run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--run", "bf16", "--verbose"});
  CHECK(verbose.out.find("computed at bf16: ") != std::string::npos);
}

TEST_CASE("tf32 numerics exist on CUDA only: kj baselines and kj audit refuse them on the CPU") {
  scratch_dir dir;
  for (const char* command : {"baselines", "audit"}) {
    const auto r =
        kj_in(dir, {command, "--device", "cpu", "--precision", "tf32", "--ids", "1", "--level", "1"});
    INFO(command << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("--precision tf32: TF32 matmuls and convolutions exist on CUDA only") !=
          std::string::npos);
  }
}
