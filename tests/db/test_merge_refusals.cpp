// kj merge refuses what it cannot merge rightly: another schema version, a foreign or missing file, itself, a
// shard judged with other options, a table or a reference it does not know.
#include "merge_fixtures.hpp"

using namespace kj::test;
using namespace kj::test::db;
using namespace kj::test::merge;

TEST_CASE("merge refuses a source at another schema version, a foreign file, a missing one and itself") {
  shards f;
  const fs::path old = f.dir / "old.sqlite";
  {
    auto raw =
        kj::db::sqlite::connection::open(old, kj::db::sqlite::connection::open_mode::read_write_create);
    kj::db::migrate(raw, kj::db::migrations().first(5));
  }
  const std::string error = db_error_of([&] { kj::db::merge_database(f.out, old); });
  CHECK(contains(error, old.string()));
  CHECK(contains(error, "schema version is 5"));
  CHECK(contains(error, "has " + std::to_string(kj::db::schema_version)));
  CHECK(contains(error, "kj db migrate"));

  const fs::path text = f.dir / "notes.sqlite";
  write_file(text, "these are not the rows you are looking for\n");
  CHECK(contains(db_error_of([&] { kj::db::merge_database(f.out, text); }), text.string()));
  CHECK(
      contains(db_error_of([&] { kj::db::merge_database(f.out, f.dir / "absent.sqlite"); }), "no such file"));
  CHECK(contains(db_error_of([&] { kj::db::merge_database(f.out, f.out); }), "into itself"));
  CHECK(count_rows(f.out, "runs") == 1); // nothing was merged by the refused ones
}

TEST_CASE("merge refuses a shard judged with other options, and another run under a shard already merged") {
  scratch_dir dir;
  const fs::path a = dir / "a.sqlite", sized = dir / "sized.sqlite", again = dir / "again.sqlite",
                 out = dir / "out.sqlite";
  fill_shard(a, "1/2", "stack-a", 1, 2, "finished", R"(,"overrides":{},"gpus":[0])");
  // Another machine (other GPUs) is fine; other sizes are another run.
  fill_shard(sized, "2/2", "stack-a", 3, 4, "finished", R"(,"overrides":{"dim":64},"gpus":[1])");
  kj::db::merge_database(out, a);
  std::string refused;
  try {
    kj::db::merge_database(out, sized);
  } catch (const kj::db::db_error& e) {
    refused = e.what();
  }
  CHECK(refused.find("judged with other overrides than run r-shards here") != std::string::npos);
  fill_shard(again, "1/2", "stack-a", 1, 2, "finished", R"(,"overrides":{})");
  kj::db::sqlite::connection::open(again, kj::db::sqlite::connection::open_mode::read_write_create)
      .exec("UPDATE runs SET created_at = '2026-02-02T00:00:00.000Z'", "another start");
  refused.clear();
  try {
    kj::db::merge_database(out, again);
  } catch (const kj::db::db_error& e) {
    refused = e.what();
  }
  CHECK(refused.find("shard 1/2 of run r-shards is already merged") != std::string::npos);
  CHECK_NOTHROW(kj::db::merge_database(out, a)); // the same part again: nothing new, no refusal
}

TEST_CASE("merge knows every table of the schema") {
  scratch_dir dir;
  {
    auto s = kj::db::store::open(dir / "kj.sqlite");
  }
  auto raw =
      kj::db::sqlite::connection::open(dir / "kj.sqlite", kj::db::sqlite::connection::open_mode::read_only);
  auto tables =
      raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                  "AND name <> 'schema_migrations'",
                  "list tables");
  std::set<std::string> schema;
  while (tables.step())
    schema.insert(tables.column_text(0));
  const auto& merged = kj::db::merged_tables();
  // A migration that adds a table must teach db/merge.cpp to copy it (and add it to `counted` above).
  CHECK(schema == std::set<std::string>(merged.begin(), merged.end()));
  CHECK(std::set<std::string>(counted.begin(), counted.end()) == schema);
}

TEST_CASE("merge refuses to copy a reference it does not map") {
  shards f;
  { // what a migration that forgot db/merge.cpp would leave: a new column naming another table's ids
    auto raw =
        kj::db::sqlite::connection::open(f.out, kj::db::sqlite::connection::open_mode::read_write_create);
    raw.exec("ALTER TABLE evaluations ADD COLUMN baseline_run INTEGER REFERENCES runs(id)", "add a column");
  }
  const std::string error = db_error_of([&] { kj::db::merge_database(f.out, f.a); });
  CHECK(contains(error, "does not map evaluations.baseline_run (a reference to runs)"));
}
