// Shards: parsing --shard, a partition that is stable (a job's shard depends on its identity only, and not on
// the other jobs), and the real `kj` refusing bad shard values and a bad merge by name.
#include "db/migrations.hpp"
#include "db/sqlite.hpp"
#include "planning/orchestrator/shard.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <map>
#include <set>

using namespace kj::test;
using kj::orchestrator::parse_shard;

namespace {

kj::kb::problem problem(int number) {
  kj::kb::problem p;
  p.suite = "kernelbench", p.kb_version = "main", p.level = 1, p.number = number;
  p.file_name = std::to_string(number) + "_Op.py";
  return p;
}

int shard_of(const std::string& key, int count) {
  int found = 0;
  for (int i = 1; i <= count; ++i)
    if (kj::orchestrator::shard{i, count}.holds(key)) found = found ? -1 : i;
  return found;
}

} // namespace

TEST_CASE("shard i/N parses whole numbers with 1 <= i <= N") {
  CHECK(parse_shard("2/4").index == 2);
  CHECK(parse_shard("2/4").count == 4);
  CHECK(parse_shard("2/4").label() == "2/4");
  CHECK(parse_shard("1/1").label().empty()); // the whole plan
  for (const char* bad : {"0/3", "4/3", "x", "1/0", "-1/3", "1/", "/3", "1/3/5", "1.5/3", " 1/3", ""}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_shard(bad), kj::kb::source_error);
  }
  try {
    parse_shard("4/3");
  } catch (const kj::kb::source_error& e) {
    CHECK(contains(e.what(), "--shard '4/3'"));
    CHECK(contains(e.what(), "between 1 and the shard count (3)"));
  }
}

TEST_CASE("every job is in exactly one shard, by its identity alone") {
  std::map<int, int> sizes;
  for (int n = 1; n <= 200; ++n)
    for (int sample = 0; sample < 2; ++sample) {
      const std::string key = kj::orchestrator::job_key(problem(n), "hash" + std::to_string(n), sample);
      const int shard = shard_of(key, 4);
      REQUIRE(shard >= 1);
      ++sizes[shard];
    }
  for (int i = 1; i <= 4; ++i) // 400 jobs: each shard near 100 (a fair hash)
    CHECK((sizes[i] > 60 && sizes[i] < 140));
  // The partition is part of the format: shards judged by two kj builds must agree. Values computed
  // independently (Python's hashlib: first 16 hex digits of the SHA-256, modulo N, plus one):
  const std::string key = kj::orchestrator::job_key(problem(1), "abc", 0);
  CHECK(key == "kernelbench\nmain\n1\n1_Op.py\nabc\n0");
  CHECK(shard_of(key, 4) == 2);
  CHECK(shard_of(key, 1000) == 534);
  CHECK(shard_of(key, 7) == 7);
  CHECK(shard_of("builtin\nmain\n2\n3_Gemm_Scale_Softmax.py\nffff\n1", 1000) == 589);
}

TEST_CASE("kj run and kj baselines refuse a bad --shard before doing anything") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  for (const char* bad : {"0/3", "4/3", "x"}) {
    for (const char* command : {"run", "baselines"}) {
      const auto r = run_kj({command, "--shard", bad, "--device", "cpu", "--db", db});
      INFO(command << " --shard " << bad << ": " << r.err);
      CHECK(r.exit_code == 2);
      CHECK(contains(r.err, std::string("--shard '") + bad + "'"));
    }
  }
  CHECK_FALSE(std::filesystem::exists(db)); // refused before the DB was created
  const auto live = run_kj({"run", "--shard", "1/2", "--adapter", "openai", "--model", "m", "--db", db});
  CHECK(live.exit_code == 2);
  CHECK(contains(live.err, "every shard would ask the model"));
  CHECK(contains(run_kj({"run", "--help"}).out, "--shard"));
}

TEST_CASE("kj merge names what it refuses, and kj db migrate brings an old file forward") {
  scratch_dir dir;
  const auto old = dir / "old.sqlite";
  {
    auto raw =
        kj::db::sqlite::connection::open(old, kj::db::sqlite::connection::open_mode::read_write_create);
    kj::db::migrate(raw, kj::db::migrations().first(5));
  }
  const std::string out = (dir / "all.sqlite").string();
  const auto refused = run_kj({"merge", old.string(), "-o", out});
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, old.string()));
  CHECK(contains(refused.err, "schema version is 5"));
  CHECK(contains(refused.err, "has " + std::to_string(kj::db::schema_version)));

  const auto missing = run_kj({"merge", (dir / "absent.sqlite").string(), "-o", out});
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "absent.sqlite"));
  CHECK(run_kj({"merge", old.string()}).exit_code == 2); // no -o

  const auto migrated = run_kj({"db", "migrate", "--db", old.string()});
  CHECK(migrated.exit_code == 0);
  CHECK(contains(migrated.out, "schema version 5 -> " + std::to_string(kj::db::schema_version)));
  const auto merged = run_kj({"merge", old.string(), "-o", out});
  CHECK(merged.exit_code == 0);
  CHECK(contains(merged.out, "nothing new"));
  // Into a new output, an input refused after others were merged leaves those merged (one transaction each).
  const std::string fresh = (dir / "fresh.sqlite").string();
  const auto partly = run_kj({"merge", old.string(), (dir / "absent.sqlite").string(), "-o", fresh});
  CHECK(partly.exit_code == 2);
  CHECK(contains(partly.err, "keeps what was merged before the refused input: " + old.string()));
  CHECK(std::filesystem::exists(fresh));
}
