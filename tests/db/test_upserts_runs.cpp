// Tests the deduplicating upserts, the run rows, and the hash and time helpers.
#include "core/hashing.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <cctype>

using kj::db::store;
using namespace kj::test::db;

TEST_CASE("sha256_hex and now_iso8601") {
  CHECK(kj::core::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(kj::core::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  const std::string now = kj::core::now_iso8601(); // e.g. 2026-11-20T23:59:59.123Z
  REQUIRE(now.size() == 24);
  CHECK(now[4] == '-');
  CHECK(now[10] == 'T');
  CHECK(now[19] == '.');
  CHECK(now.back() == 'Z');
  CHECK(std::isdigit(static_cast<unsigned char>(now[22])));
}

TEST_CASE("upserts return the existing row for the same natural key") {
  kj::test::scratch_dir dir;
  store db = store::open(dir / "kj.sqlite");

  SECTION("stacks, by stack_hash") {
    const auto a = db.upsert_stack(make_stack("h1"));
    auto changed = make_stack("h1");
    changed.fingerprint_json = R"({"other":"fields"})";
    CHECK(db.upsert_stack(changed) == a);
    CHECK(db.upsert_stack(make_stack("h2")) != a);
    CHECK(db.info().stacks == 2);
    CHECK(contains(db_error_of([&] { db.upsert_stack(make_stack("")); }), "stack_hash is empty"));
  }
  SECTION("problems, by suite, version, level, file name and source hash") {
    const auto p = db.upsert_problem(make_problem(1, 7));
    auto moved = make_problem(1, 7);
    moved.path = "/elsewhere/7_Problem_7.py"; // not part of the key: the first row is kept
    CHECK(db.upsert_problem(moved) == p);
    auto hashed = make_problem(1, 7);
    hashed.source_hash = kj::core::sha256_hex(hashed.source); // an empty hash is the sha256 of the source
    CHECK(db.upsert_problem(hashed) == p);

    auto edited = make_problem(1, 7, "class Model: x = 1");
    auto other_version = make_problem(1, 7);
    other_version.kb_version = "v0.1";
    auto other_level = make_problem(2, 7);
    const auto e = db.upsert_problem(edited);
    const auto v = db.upsert_problem(other_version);
    const auto l = db.upsert_problem(other_level);
    CHECK(e != p);
    CHECK(v != p);
    CHECK(l != p);
    CHECK(v != e);
    CHECK(db.info().problems == 4);
  }
  SECTION("candidates, by problem, producer, sample and source hash") {
    const auto p = db.upsert_problem(make_problem(1, 1));
    const auto c = db.upsert_candidate(make_candidate(p, 0));
    CHECK(db.upsert_candidate(make_candidate(p, 0)) == c);
    CHECK(db.upsert_candidate(make_candidate(p, 1)) != c);
    CHECK(db.upsert_candidate(make_candidate(p, 0, "class ModelNew: y = 2")) != c);
    auto identity = make_candidate(p, 0);
    identity.producer = "identity";
    CHECK(db.upsert_candidate(identity) != c);
    CHECK(db.info().candidates == 4);
  }
  SECTION("a candidate of a problem that does not exist is refused") {
    const std::string message = db_error_of([&] { db.upsert_candidate(make_candidate(12345, 0)); });
    CHECK(contains(message, "FOREIGN KEY"));
    CHECK(db.info().candidates == 0);
  }
}

TEST_CASE("runs: create, find, read back, update, latest") {
  kj::test::scratch_dir dir;
  store db = store::open(dir / "kj.sqlite");
  CHECK_FALSE(db.latest_run_uid().has_value());
  CHECK_FALSE(db.find_run("r-none").has_value());
  CHECK_FALSE(db.get_run(1).has_value());

  auto first = make_run("r-1");
  first.created_at = "2000-01-01T00:00:00.000Z";
  const auto id1 = db.create_run(first);
  const auto id2 = db.create_run(make_run("r-2")); // created_at filled with now
  CHECK(db.find_run("r-1") == id1);
  CHECK(db.find_run("r-2") == id2);
  CHECK(db.latest_run_uid() == std::string("r-2"));

  const auto run = db.get_run(id1);
  REQUIRE(run.has_value());
  CHECK(run->run_uid == "r-1");
  CHECK(run->created_at == "2000-01-01T00:00:00.000Z");
  CHECK(run->status == "running");
  CHECK(run->device == "cuda");
  CHECK(run->command_line == "kj run --level 1");
  CHECK(run->kj_version == "0.1.0+abc123");
  CHECK(run->config_json == R"({"trials":5})");
  CHECK(run->stack_id == 0);
  CHECK(db.get_run(id2)->created_at.size() == 24);

  db.set_run_status(id1, "finished");
  const auto stack = db.upsert_stack(make_stack());
  db.set_run_stack(id1, stack);
  CHECK(db.get_run(id1)->status == "finished");
  CHECK(db.get_run(id1)->stack_id == stack);

  CHECK(contains(db_error_of([&] { db.create_run(make_run("r-1")); }), "UNIQUE"));
  CHECK(contains(db_error_of([&] { db.create_run(make_run("")); }), "run_uid is empty"));
  CHECK(contains(db_error_of([&] { db.set_run_status(999, "finished"); }), "no such run"));
  CHECK(contains(db_error_of([&] { db.set_run_stack(id1, 999); }), "FOREIGN KEY"));
  CHECK(db.info().runs == 2);
}
