// store::batch: several writes in one transaction, the store's own transactions nested inside it, and what a
// kill -9 in the middle of one leaves behind (nothing of it, and an intact file).
#include "db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace kj::test;
using namespace kj::test::db;

namespace {

struct fixture : populated_store {
  std::int64_t problem = db.upsert_problem(make_problem(1, 1));
};

std::string integrity(const std::filesystem::path& path) {
  auto raw = kj::db::sqlite::connection::open(path, kj::db::sqlite::connection::open_mode::read_only);
  return raw.query_text("PRAGMA integrity_check", "check integrity");
}

} // namespace

TEST_CASE("a batch lands whole on commit and not at all without it") {
  fixture f;
  {
    kj::db::store::batch batch(f.db);
    const auto c = f.db.upsert_candidate(make_candidate(f.problem, 0));
    f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, c, f.stack_id)); // nested: a savepoint
    CHECK(count_rows(f.path, "evaluations") == 0); // another connection sees nothing yet
  }
  CHECK(count_rows(f.path, "candidates") == 0);
  CHECK(count_rows(f.path, "trials") == 0);

  kj::db::store::batch batch(f.db);
  const auto c = f.db.upsert_candidate(make_candidate(f.problem, 0));
  f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, c, f.stack_id));
  batch.commit();
  CHECK(count_rows(f.path, "evaluations") == 1);
  CHECK(count_rows(f.path, "trials") == 2);
}

TEST_CASE("a failing write inside a batch rolls back only itself") {
  fixture f;
  const auto c = f.db.upsert_candidate(make_candidate(f.problem, 0));
  f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, c, f.stack_id));
  kj::db::store::batch batch(f.db);
  const auto other = f.db.upsert_candidate(make_candidate(f.problem, 1, "other source"));
  const std::string error =
      db_error_of([&] { f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, c, f.stack_id)); });
  CHECK(contains(error, "already holds an evaluation"));
  f.db.insert_evaluation(make_evaluation(f.run_id, f.problem, other, f.stack_id));
  batch.commit();
  CHECK(count_rows(f.path, "evaluations") == 2);
  CHECK(count_rows(f.path, "trials") == 4);
}

TEST_CASE("kill -9 in the middle of a batch leaves the committed rows and none of the batch") {
  scratch_dir dir;
  const auto path = dir / "kj.sqlite";
  std::int64_t run = 0, stack = 0, problem = 0;
  { // no connection is open across the fork: SQLite's locks do not survive one
    auto store = kj::db::store::open(path);
    stack = store.upsert_stack(make_stack());
    run = store.create_run(make_run("r-kill", stack));
    problem = store.upsert_problem(make_problem(1, 1));
    const auto kept = store.upsert_candidate(make_candidate(problem, 0));
    store.insert_evaluation(make_evaluation(run, problem, kept, stack));
  }
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) { // a writer killed with its transaction open; never back into Catch2
    try {
      auto writer = kj::db::store::open(path);
      kj::db::store::batch batch(writer);
      for (int sample = 1; sample <= 50; ++sample) {
        const auto c = writer.upsert_candidate(make_candidate(problem, sample, "s" + std::to_string(sample)));
        writer.insert_evaluation(make_evaluation(run, problem, c, stack));
      }
      ::raise(SIGKILL);
    } catch (...) {
    }
    ::_exit(1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  CHECK(integrity(path) == "ok");
  CHECK(count_rows(path, "evaluations") == 1);
  CHECK(count_rows(path, "candidates") == 1);
  CHECK(count_rows(path, "trials") == 2);
  // The file takes writes again: the killed writer's lock went with it.
  auto store = kj::db::store::open(path);
  const auto next = store.upsert_candidate(make_candidate(problem, 1, "next"));
  store.insert_evaluation(make_evaluation(run, problem, next, stack));
  CHECK(count_rows(path, "evaluations") == 2);
}
