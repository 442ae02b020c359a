// Schema v9: candidate bytes kept losslessly, a run's producer and detail, its verdict counts, removing a run
// with everything under it, and reading a DB whose WAL lies beside it without its index.
#include "core/hashing.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <filesystem>

using namespace kj::test;
using namespace kj::test::db;
namespace fs = std::filesystem;

TEST_CASE("a candidate that is not UTF-8 keeps its bytes, is keyed by them, and reads back as stored") {
  scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto problem = store.upsert_problem(make_problem(1, 1));
  const std::string bytes("# caf\xE9\0\xFF\nclass ModelNew: pass\n", 28);
  auto c = make_candidate(problem, 0, "# caf\xEF\xBF\xBD\nclass ModelNew: pass\n");
  c.source_bytes = bytes;
  const auto id = store.upsert_candidate(c);
  const auto back = store.get_candidate(id).value();
  CHECK(back.source_bytes == bytes);
  CHECK(back.source == c.source);
  CHECK(back.source_hash == kj::core::sha256_hex(bytes));
  // Another file whose bytes differ but read as the same text is another candidate.
  auto other = c;
  other.source_bytes = std::string("# caf\xE8\0\xFF\nclass ModelNew: pass\n", 28);
  CHECK(store.upsert_candidate(other) != id);
  CHECK(store.upsert_candidate(c) == id);
  // A UTF-8 candidate stores no bytes (NULL).
  const auto plain = store.get_candidate(store.upsert_candidate(make_candidate(problem, 1))).value();
  CHECK(plain.source_bytes.empty());
  CHECK(count_rows(dir / "kj.sqlite", "candidates WHERE source_bytes IS NULL") == 1);
}

TEST_CASE("a run has a producer, a detail and its verdict counts, and remove_run takes everything under it") {
  scratch_dir dir;
  const fs::path path = dir / "kj.sqlite";
  auto store = kj::db::store::open(path);
  const auto stack = store.upsert_stack(make_stack());
  auto record = make_run("r1", stack);
  record.producer = "modelA";
  const auto run = store.create_run(record);
  const auto keep = store.create_run(make_run("r2", stack));
  CHECK(store.run_is_empty(run));
  const auto problem = store.upsert_problem(make_problem(1, 1));
  for (int sample : {0, 1, 2}) {
    const auto candidate = store.upsert_candidate(make_candidate(problem, sample));
    auto e = make_evaluation(run, problem, candidate, stack);
    e.verdict = sample == 2 ? kj::verdict::incorrect : kj::verdict::correct;
    e.timings.push_back(make_timing("candidate", 1.0));
    e.findings.push_back({"encoding", 2, "not UTF-8"});
    store.insert_evaluation(e);
    store.insert_evaluation(make_evaluation(keep, problem, candidate, stack));
  }
  CHECK_FALSE(store.run_is_empty(run));
  store.set_run_detail(run, "setup failed: no such folder");
  store.set_run_producer(keep, "modelB");
  const auto runs = store.runs();
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].producer == "modelA");
  CHECK(runs[0].detail == "setup failed: no such folder");
  CHECK(runs[0].verdicts == std::map<std::string, std::int64_t>{{"correct", 2}, {"incorrect", 1}});
  CHECK(runs[1].producer == "modelB");
  CHECK(store.failed_candidates(run).size() == 1);

  store.remove_run(run);
  CHECK_FALSE(store.find_run("r1"));
  CHECK(store.evaluation_count(keep) == 3);
  CHECK(count_rows(path, "evaluations") == 3);
  CHECK(count_rows(path, "timings") == 0);
  CHECK(count_rows(path, "timing_samples") == 0);
  CHECK(count_rows(path, "static_findings") == 0);
  CHECK(count_rows(path, "candidates") == 3); // shared with the other run
  auto check = kj::db::sqlite::connection::open(path, kj::db::sqlite::connection::open_mode::read_only);
  CHECK_FALSE(check.prepare("PRAGMA foreign_key_check", "check").step());
}

TEST_CASE("a reader opens a DB whose WAL was copied without its index, and sees the rows in the WAL") {
  scratch_dir dir;
  const fs::path path = dir / "kj.sqlite";
  {
    auto writer = kj::db::store::open(path);
    writer.create_run(make_run("before"));
    // While this writer is open its commits are in kj.sqlite-wal: copy the file and its WAL only.
    auto late = kj::db::store::open(path);
    late.create_run(make_run("in-the-wal"));
    fs::create_directories(dir / "copy");
    fs::copy_file(path, dir / "copy" / "kj.sqlite");
    fs::copy_file(path.string() + "-wal", dir / "copy" / "kj.sqlite-wal");
  }
  const auto reader = kj::db::store::open_read_only(dir / "copy" / "kj.sqlite");
  CHECK(reader.find_run("before"));
  CHECK(reader.find_run("in-the-wal"));
}
