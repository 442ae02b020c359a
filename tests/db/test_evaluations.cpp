// Tests evaluations: the transactional insert and its read-back, duplicates, rollback, and the rows reports
// read.
#include "tests/db/db_fixtures.hpp"
#include "tests/support/catch_compat.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

using kj::db::store;
using namespace kj::test::db;

TEST_CASE("insert_evaluation round-trips trials, timings and raw samples") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  auto e = make_evaluation(s.run_id, problem, candidate, s.stack_id);
  e.overrides_json = R"({"batch_size":4})";
  e.trials[1].seed = std::numeric_limits<std::uint64_t>::max(); // above INT64_MAX
  e.trials[1].passed = false;
  e.trials[1].max_abs_err = std::numeric_limits<double>::quiet_NaN();
  e.trials[1].max_rel_err = std::numeric_limits<double>::infinity();
  e.trials[1].mismatches = 16;
  e.timings = {make_timing("candidate", 1.5), make_timing("reference_eager", 3.0)};
  e.timings[0].samples_ms = {1.7, 1.5, 1.4, 1.6, 1.5};

  CHECK_FALSE(s.db.has_evaluation(s.run_id, candidate));
  const auto id = s.db.insert_evaluation(e);
  CHECK(s.db.has_evaluation(s.run_id, candidate));
  CHECK_FALSE(s.db.get_evaluation(id + 1).has_value());

  const auto back = s.db.get_evaluation(id);
  REQUIRE(back.has_value());
  CHECK(back->run_id == s.run_id);
  CHECK(back->problem_id == problem);
  CHECK(back->candidate_id == candidate);
  CHECK(back->stack_id == s.stack_id);
  CHECK(back->device == "cuda");
  CHECK(back->overrides_json == R"({"batch_size":4})");
  CHECK(back->protocol == "kernelbench-main");
  CHECK(back->verdict == kj::verdict::correct);
  CHECK(back->error.empty());
  CHECK(back->started_at == e.started_at);
  CHECK(back->finished_at == e.finished_at);
  CHECK(back->duration_s == Approx(2.5));

  REQUIRE(back->trials.size() == 2);
  CHECK(back->trials[0].index == 0);
  CHECK(back->trials[0].seed == 42);
  CHECK(back->trials[0].passed);
  CHECK(back->trials[0].max_abs_err == 1e-6);
  CHECK(back->trials[0].detail_json == R"({"shape":[4,4]})");
  CHECK(back->trials[1].seed == std::numeric_limits<std::uint64_t>::max());
  CHECK_FALSE(back->trials[1].passed);
  CHECK(std::isnan(back->trials[1].max_abs_err));
  CHECK(std::isinf(back->trials[1].max_rel_err));
  CHECK(back->trials[1].mismatches == 16);

  REQUIRE(back->timings.size() == 2);
  const auto& t = back->timings[0];
  CHECK(t.subject == "candidate");
  CHECK(t.method == "host-median");
  CHECK(t.clock == "host");
  CHECK(t.params_json == R"({"warmup":3})");
  CHECK(t.samples_ms == std::vector<double>{1.7, 1.5, 1.4, 1.6, 1.5}); // exact, in measurement order
  CHECK(t.median_ms == 1.5);
  CHECK(t.min_ms == Approx(1.35));
  CHECK(t.max_ms == Approx(1.65));
  CHECK(t.stdev_ms == Approx(0.15));
  CHECK(back->timings[1].subject == "reference_eager");
  CHECK(back->timings[1].samples_ms.size() == 3);
  CHECK(s.db.info().timing_samples == 8);
}

TEST_CASE("an evaluation without a stack_id takes the run's stack, and is refused if the run has none") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  const auto id = s.db.insert_evaluation(make_evaluation(s.run_id, problem, candidate, 0));
  CHECK(s.db.get_evaluation(id)->stack_id == s.stack_id);

  const auto bare_run = s.db.create_run(make_run("r-no-stack"));
  const std::string message =
      db_error_of([&] { s.db.insert_evaluation(make_evaluation(bare_run, problem, candidate, 0)); });
  CHECK(contains(message, "no stack"));
  CHECK_FALSE(s.db.has_evaluation(bare_run, candidate));
}

TEST_CASE("an evaluation must agree with its candidate's problem") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto other = s.db.upsert_problem(make_problem(1, 2));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  CHECK(contains(db_error_of([&] { s.db.insert_evaluation(make_evaluation(s.run_id, other, candidate, 0)); }),
                 "belongs to problem"));
  CHECK(contains(db_error_of([&] { s.db.insert_evaluation(make_evaluation(s.run_id, problem, 999, 0)); }),
                 "no candidate with id 999"));
  const auto id =
      s.db.insert_evaluation(make_evaluation(s.run_id, 0, candidate, 0)); // 0: the candidate's problem
  CHECK(s.db.get_evaluation(id)->problem_id == problem);
}

TEST_CASE("a second evaluation of the same candidate in the same run is rejected") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  auto first = make_evaluation(s.run_id, problem, candidate, s.stack_id);
  first.timings = {make_timing("candidate", 1.0)};
  const auto id = s.db.insert_evaluation(first);

  auto second = first;
  second.verdict = kj::verdict::incorrect;
  const std::string message = db_error_of([&] { s.db.insert_evaluation(second); });
  CHECK(contains(message, s.path.string()));
  CHECK(contains(message, "already holds an evaluation"));
  CHECK(s.db.get_evaluation(id)->verdict == kj::verdict::correct);
  CHECK(s.db.info().evaluations == 1);
  CHECK(count_rows(s.path, "trials") == 2);
  CHECK(s.db.info().timing_samples == 3);

  // The same candidate in another run is a separate evaluation.
  const auto run2 = s.db.create_run(make_run("r-test-2", s.stack_id));
  second.run_id = run2;
  CHECK(s.db.insert_evaluation(second) != id);
}

TEST_CASE("a failed insert_evaluation leaves no row behind") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  auto e = make_evaluation(s.run_id, problem, candidate, s.stack_id);

  SECTION("failing on a duplicate trial index, after the evaluation and a trial were written") {
    e.trials.push_back(e.trials[0]);
    CHECK(contains(db_error_of([&] { s.db.insert_evaluation(e); }), "trials.trial_index"));
  }
  SECTION("failing on the last timing, after trials, a timing and its samples were written") {
    e.timings = {make_timing("candidate", 1.0), make_timing("reference_eager", 2.0),
                 make_timing("candidate", 1.0)};
    CHECK(contains(db_error_of([&] { s.db.insert_evaluation(e); }), "timings.subject"));
  }
  CHECK_FALSE(s.db.has_evaluation(s.run_id, candidate));
  CHECK(count_rows(s.path, "evaluations") == 0);
  CHECK(count_rows(s.path, "trials") == 0);
  CHECK(count_rows(s.path, "timings") == 0);
  CHECK(count_rows(s.path, "timing_samples") == 0);

  // The store is still usable: no transaction was left open.
  e.trials.resize(2);
  e.timings = {make_timing("candidate", 1.0)};
  s.db.insert_evaluation(e);
  CHECK(count_rows(s.path, "trials") == 2);
  CHECK(count_rows(s.path, "timing_samples") == 3);
}

TEST_CASE(
    "evaluation_rows joins problems, candidates, timings and samples, in suite/level/number/sample order") {
  populated_store s;
  // Inserted out of order on purpose.
  const auto p2 = s.db.upsert_problem(make_problem(2, 1));
  const auto p1b = s.db.upsert_problem(make_problem(1, 10));
  const auto p1a = s.db.upsert_problem(make_problem(1, 3));
  const auto c2 = s.db.upsert_candidate(make_candidate(p2, 0));
  const auto c1b = s.db.upsert_candidate(make_candidate(p1b, 0));
  const auto c1a1 = s.db.upsert_candidate(make_candidate(p1a, 1));
  const auto c1a0 = s.db.upsert_candidate(make_candidate(p1a, 0));

  auto timed = make_evaluation(s.run_id, p2, c2, s.stack_id);
  timed.timings = {make_timing("reference_eager", 3.0), make_timing("candidate", 1.5)};
  s.db.insert_evaluation(timed);
  auto failed = make_evaluation(s.run_id, p1b, c1b, s.stack_id); // no candidate timing
  failed.verdict = kj::verdict::incorrect;
  failed.error = "output mismatch";
  failed.timings = {make_timing("reference_eager", 2.0)};
  s.db.insert_evaluation(failed);
  auto mixed = make_evaluation(s.run_id, p1a, c1a1, s.stack_id); // not measured the same way: no speedup
  mixed.timings = {make_timing("candidate", 1.0, "robust"), make_timing("reference_eager", 2.0)};
  s.db.insert_evaluation(mixed);
  auto untimed = make_evaluation(s.run_id, p1a, c1a0, s.stack_id);
  s.db.insert_evaluation(untimed);
  // Another run's evaluation must not show up.
  const auto other_run = s.db.create_run(make_run("r-other", s.stack_id));
  s.db.insert_evaluation(make_evaluation(other_run, p2, c2, s.stack_id));

  kj::db::evaluation_filter filter;
  filter.run_uid = "r-test-1";
  const auto rows = s.db.evaluation_rows(filter);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].number == 3);
  CHECK(rows[0].sample == 0);
  CHECK(rows[1].number == 3);
  CHECK(rows[1].sample == 1);
  CHECK(rows[2].number == 10);
  CHECK(rows[3].level == 2);

  const auto& t = rows[3];
  CHECK(t.run_uid == "r-test-1");
  CHECK(t.suite == "kernelbench");
  CHECK(t.kb_version == "main");
  CHECK(t.number == 1);
  CHECK(t.problem_name == "Problem_1");
  CHECK(t.problem_file == "1_Problem_1.py");
  CHECK(t.candidate_path == "/candidates/0.py");
  CHECK(t.producer == "directory");
  CHECK(t.device == "cuda");
  CHECK(t.verdict == kj::verdict::correct);
  CHECK(t.protocol == "kernelbench-main");
  CHECK(t.stack_hash == "stack-a");
  CHECK(t.duration_s == 2.5);
  // Timings in insertion order, with their raw samples in measurement order.
  REQUIRE(t.timings.size() == 2);
  CHECK(t.timings[0].subject == "reference_eager");
  CHECK(t.timings[0].median_ms == 3.0);
  CHECK(t.timings[1].subject == "candidate");
  CHECK(t.timings[1].method == "host-median");
  CHECK(t.timings[1].samples_ms == std::vector<double>{1.5 * 1.1, 1.5, 1.5 * 0.9});

  CHECK(rows[2].verdict == kj::verdict::incorrect);
  CHECK(rows[2].error == "output mismatch");
  REQUIRE(rows[2].timings.size() == 1);
  CHECK(rows[1].timings[0].method == "robust");
  CHECK(rows[0].timings.empty());

  filter.run_uid = "r-other";
  CHECK(s.db.evaluation_rows(filter).size() == 1);
  filter.run_uid = "r-unknown";
  CHECK(s.db.evaluation_rows(filter).empty());
  // Filters by problem, level and stack, across runs.
  filter.run_uid.clear();
  filter.level = 2;
  CHECK(s.db.evaluation_rows(filter).size() == 2);
  filter.level.reset();
  filter.problem = "3_Problem_3.py";
  CHECK(s.db.evaluation_rows(filter).size() == 2);
  filter.problem.clear();
  filter.stack_hash = "stack-b";
  CHECK(s.db.evaluation_rows(filter).empty());

  const auto info = s.db.info();
  CHECK(info.path == s.path);
  CHECK(info.schema_version == kj::db::schema_version);
  CHECK(info.runs == 2);
  CHECK(info.stacks == 1);
  CHECK(info.problems == 3);
  CHECK(info.candidates == 4);
  CHECK(info.evaluations == 5);
  CHECK(info.timing_samples == 5 * 3);
}

TEST_CASE("a verdict name kj never writes is refused where it is read, naming the evaluation and the name") {
  populated_store s;
  const auto problem = s.db.upsert_problem(make_problem(1, 1));
  const auto candidate = s.db.upsert_candidate(make_candidate(problem, 0));
  const auto id = s.db.insert_evaluation(make_evaluation(s.run_id, problem, candidate, s.stack_id));
  {
    auto raw =
        kj::db::sqlite::connection::open(s.path, kj::db::sqlite::connection::open_mode::read_write_create);
    raw.exec("UPDATE evaluations SET verdict = 'passed'", "a DB another tool wrote into");
  }
  const auto message = [&](const auto& read) {
    try {
      read();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string rows = message([&] { (void)s.db.evaluation_rows({}); });
  CHECK(rows.find("read evaluation " + std::to_string(id)) != std::string::npos);
  CHECK(rows.find("unknown verdict 'passed'") != std::string::npos);
  CHECK(message([&] { (void)s.db.get_evaluation(id); }).find("unknown verdict 'passed'") !=
        std::string::npos);
}
