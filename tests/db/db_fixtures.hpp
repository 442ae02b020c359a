// Shared helpers for the db tests: sample records, a populated store, and capturing a db_error's message.
#pragma once

#include "db/sqlite.hpp"
#include "db/store.hpp"
#include "tests/support/paths.hpp"

#include <filesystem>
#include <string>
#include <utility>

namespace kj::test::db {

// The message of the db_error that `f` throws, or "<no db_error>" when it throws none.
template <class F>
std::string db_error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const kj::db::db_error& e) {
    return e.what();
  }
  return "<no db_error>";
}

using kj::test::contains; // tests/support/paths.hpp

// A second, raw connection for checking what the store wrote, independently of the store's own readers.
inline std::int64_t count_rows(const std::filesystem::path& path, const std::string& table) {
  auto db = kj::db::sqlite::connection::open(path, kj::db::sqlite::connection::open_mode::read_only);
  return db.query_int64("SELECT count(*) FROM " + table, "count " + table);
}

inline kj::db::stack_record make_stack(const std::string& hash = "stack-a") {
  return {hash, "3.12.3", "2.5.1", "NVIDIA H100 80GB HBM3", R"({"cuda":"12.4","driver":"580"})"};
}

inline kj::db::problem_record make_problem(int level, int number,
                                           const std::string& source = "class Model: pass") {
  const std::string name = "Problem_" + std::to_string(number);
  const std::string file_name = std::to_string(number) + "_" + name + ".py";
  return {"kernelbench",
          "main",
          level,
          number,
          name,
          file_name,
          "/kb/level" + std::to_string(level) + "/" + file_name,
          source,
          "",
          ""};
}

inline kj::db::candidate_record make_candidate(std::int64_t problem_id, int sample,
                                               const std::string& source = "class ModelNew: pass") {
  return {problem_id, "directory", sample, "/candidates/" + std::to_string(sample) + ".py", source, ""};
}

inline kj::db::run_record make_run(const std::string& uid, std::int64_t stack_id = 0) {
  return {uid, "", "running", "cuda", "kj run --level 1", "0.1.0+abc123", R"({"trials":5})", stack_id};
}

inline kj::db::timing_record make_timing(const std::string& subject, double median_ms,
                                         const std::string& method = "host-median") {
  return {
      subject,   method,    "host",          R"({"warmup":3})", {median_ms * 1.1, median_ms, median_ms * 0.9},
      median_ms, median_ms, median_ms * 0.9, median_ms * 1.1,   median_ms * 0.1};
}

inline kj::db::evaluation_record make_evaluation(std::int64_t run_id, std::int64_t problem_id,
                                                 std::int64_t candidate_id, std::int64_t stack_id) {
  kj::db::evaluation_record e;
  e.run_id = run_id;
  e.problem_id = problem_id;
  e.candidate_id = candidate_id;
  e.stack_id = stack_id;
  e.device = "cuda";
  e.overrides_json = "{}";
  e.protocol = "kernelbench-main";
  e.verdict = kj::verdict::correct;
  e.started_at = "2026-01-01T00:00:00.000Z";
  e.finished_at = "2026-01-01T00:00:02.500Z";
  e.duration_s = 2.5;
  e.trials = {{0, 42, true, 1e-6, 2e-5, 0, R"({"shape":[4,4]})"}, {1, 43, true, 2e-6, 3e-5, 0, "{}"}};
  return e;
}

// A measured baseline of problem 1_Problem_1.py with three samples around median_ms.
inline kj::db::baseline_record make_baseline(const std::string& key, const std::string& mode,
                                             double median_ms, std::int64_t problem_id,
                                             std::int64_t stack_id) {
  kj::db::baseline_record b;
  b.cache_key = key;
  b.key_json = R"({"mode":")" + mode + R"("})";
  b.problem_id = problem_id;
  b.stack_id = stack_id;
  b.level = 1;
  b.file_name = "1_Problem_1.py";
  b.mode = mode;
  b.device = "cuda";
  b.precision = kj::precision::fp32;
  b.method = "host-median";
  b.clock = "host";
  b.params_json = R"({"headline":"median"})";
  b.samples_ms = {median_ms * 1.1, median_ms, median_ms * 0.9};
  b.median_ms = median_ms;
  b.mean_ms = median_ms;
  b.min_ms = median_ms * 0.9;
  b.max_ms = median_ms * 1.1;
  b.stdev_ms = median_ms * 0.1;
  b.compile_s = 12.5;
  b.hardware = "NVIDIA H100 80GB HBM3";
  return b;
}

// A store with one stack, one run on it, and problems/candidates created on demand.
struct populated_store {
  kj::test::scratch_dir dir;
  std::filesystem::path path = dir / "kj.sqlite";
  kj::db::store db = kj::db::store::open(path);
  std::int64_t stack_id = db.upsert_stack(make_stack());
  std::int64_t run_id = db.create_run(make_run("r-test-1", stack_id));
};

} // namespace kj::test::db
