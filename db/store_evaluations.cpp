// Evaluations with their trials, timings and raw samples: the transactional insert, read-back and info.
#include "db/migrations.hpp"
#include "db/store.hpp"
#include "db/store_impl.hpp"

#include <array>
#include <fmt/format.h>
#include <utility>

namespace kj::db {

using sqlite::connection;

namespace {

// The problem the candidate belongs to; the evaluation's own problem_id, when given, must agree with it.
std::int64_t resolve_problem(const connection& db, const evaluation_record& evaluation,
                             const std::string& what) {
  auto find = db.prepare("SELECT problem_id FROM candidates WHERE id = ?", what);
  find.bind_all(evaluation.candidate_id);
  if (!find.step()) db.fail(what, fmt::format("no candidate with id {}", evaluation.candidate_id));
  const std::int64_t problem_id = find.column_int64(0);
  if (evaluation.problem_id != 0 && evaluation.problem_id != problem_id)
    db.fail(what, fmt::format("candidate {} belongs to problem {}, not {}", evaluation.candidate_id,
                              problem_id, evaluation.problem_id));
  return problem_id;
}

// Every evaluation names the stack it ran on (invariant 5); 0 means the run's stack.
std::int64_t resolve_stack(const connection& db, const evaluation_record& evaluation,
                           const std::string& what) {
  if (evaluation.stack_id != 0) return evaluation.stack_id;
  auto find = db.prepare("SELECT stack_id FROM runs WHERE id = ?", what);
  find.bind_all(evaluation.run_id);
  if (!find.step()) db.fail(what, fmt::format("no run with id {}", evaluation.run_id));
  if (find.is_null(0))
    db.fail(what, fmt::format("no stack: the evaluation has stack_id 0 and run {} has none (set_run_stack)",
                              evaluation.run_id));
  return find.column_int64(0);
}

void insert_children(connection& db, std::int64_t evaluation_id, const evaluation_record& evaluation,
                     const std::string& what) {
  auto trial =
      db.prepare("INSERT INTO trials (evaluation_id, trial_index, seed, passed, max_abs_err, max_rel_err, "
                 "mismatches, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                 what + ": insert trial");
  for (const trial_record& t : evaluation.trials)
    trial
        .bind_all(evaluation_id, t.index, static_cast<std::int64_t>(t.seed), t.passed ? 1 : 0, t.max_abs_err,
                  t.max_rel_err, t.mismatches, t.detail_json)
        .run();
  auto timing =
      db.prepare("INSERT INTO timings (evaluation_id, subject, method, clock, params_json, median_ms, "
                 "mean_ms, min_ms, max_ms, stdev_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 what + ": insert timing");
  auto sample = db.prepare("INSERT INTO timing_samples (timing_id, sample_index, value_ms) VALUES (?, ?, ?)",
                           what + ": insert timing sample");
  for (const timing_record& t : evaluation.timings) {
    timing
        .bind_all(evaluation_id, t.subject, t.method, t.clock, t.params_json, t.median_ms, t.mean_ms,
                  t.min_ms, t.max_ms, t.stdev_ms)
        .run();
    const std::int64_t timing_id = db.last_insert_rowid();
    for (std::size_t i = 0; i < t.samples_ms.size(); ++i)
      sample.bind_all(timing_id, static_cast<std::int64_t>(i), t.samples_ms[i]).run();
  }
  auto vcase =
      db.prepare("INSERT INTO verification_cases (evaluation_id, case_class, case_index, seed, status, "
                 "judged_against, max_abs_err, max_rel_err, mismatches, nonfinite_mismatches, "
                 "first_index, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 what + ": insert verification case");
  for (const case_record& c : evaluation.cases)
    vcase
        .bind_all(evaluation_id, c.case_class, c.index, static_cast<std::int64_t>(c.seed), name_of(c.status),
                  c.judged_against, c.max_abs_err, c.max_rel_err, c.mismatches, c.nonfinite_mismatches,
                  c.first_index, c.message)
        .run();
  auto finding =
      db.prepare("INSERT INTO static_findings (evaluation_id, kind, line, excerpt) VALUES (?, ?, ?, ?)",
                 what + ": insert static finding");
  for (const finding_record& f : evaluation.findings)
    finding.bind_all(evaluation_id, f.kind, f.line, f.excerpt).run();
  auto baseline =
      db.prepare("INSERT OR IGNORE INTO evaluation_baselines (evaluation_id, baseline_id) VALUES (?, ?)",
                 what + ": link a baseline");
  for (const std::int64_t id : evaluation.baseline_ids)
    baseline.bind_all(evaluation_id, id).run();
}

} // namespace

std::int64_t store::evaluation_count(std::int64_t run_id) const {
  auto count =
      m_impl->m_db.prepare("SELECT count(*) FROM evaluations WHERE run_id = ? AND purpose = 'result'",
                           fmt::format("count the evaluations of run {}", run_id));
  count.bind_all(run_id);
  count.step();
  return count.column_int64(0);
}

bool store::has_evaluation(std::int64_t run_id, std::int64_t candidate_id) const {
  auto find = m_impl->m_db.prepare(
      "SELECT 1 FROM evaluations WHERE run_id = ? AND candidate_id = ? AND purpose = 'result'",
      "look for an evaluation");
  find.bind_all(run_id, candidate_id);
  return find.step();
}

std::int64_t store::insert_evaluation(const evaluation_record& evaluation) {
  connection& db = m_impl->m_db;
  const std::string what =
      fmt::format("insert evaluation (run {}, candidate {})", evaluation.run_id, evaluation.candidate_id);
  sqlite::transaction tx(db);
  if (evaluation.purpose == "result" && has_evaluation(evaluation.run_id, evaluation.candidate_id))
    db.fail(what, fmt::format("run {} already holds an evaluation of candidate {}", evaluation.run_id,
                              evaluation.candidate_id));
  const std::int64_t problem_id = resolve_problem(db, evaluation, what);
  const std::int64_t stack_id = resolve_stack(db, evaluation, what);
  db.prepare(
        "INSERT INTO evaluations (run_id, problem_id, candidate_id, stack_id, device, overrides_json, "
        "protocol, verdict, error, started_at, finished_at, duration_s, strict_verdict, strict_failed, "
        "degenerate, compatible_s, strict_s, build_key, purpose, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        what)
      .bind_all(evaluation.run_id, problem_id, evaluation.candidate_id, stack_id, evaluation.device,
                evaluation.overrides_json, evaluation.protocol, name_of(evaluation.verdict), evaluation.error,
                evaluation.started_at, evaluation.finished_at, evaluation.duration_s,
                name_of(evaluation.strict_verdict), evaluation.strict_failed, evaluation.degenerate,
                evaluation.compatible_s, evaluation.strict_s, evaluation.build_key, evaluation.purpose,
                evaluation.reason)
      .run();
  const std::int64_t evaluation_id = db.last_insert_rowid();
  insert_children(db, evaluation_id, evaluation, what);
  insert_resources(db, evaluation_id, evaluation, what);
  tx.commit();
  return evaluation_id;
}

namespace {

// Reads back what insert_children wrote besides trials and timings: strict cases (by class and index), static
// findings (in insertion order) and the linked baselines.
void read_strict_children(const connection& db, std::int64_t evaluation_id, const std::string& what,
                          evaluation_record& e) {
  auto cases =
      db.prepare("SELECT case_class, case_index, seed, status, judged_against, max_abs_err, max_rel_err, "
                 "mismatches, nonfinite_mismatches, first_index, message FROM verification_cases "
                 "WHERE evaluation_id = ? ORDER BY rowid",
                 what + ": verification cases");
  cases.bind_all(evaluation_id);
  while (cases.step())
    e.cases.push_back({.case_class = cases.column_text(0),
                       .index = cases.column_int(1),
                       .seed = static_cast<std::uint64_t>(cases.column_int64(2)),
                       .status = case_status_column(db, cases.column_text(3), what),
                       .judged_against = cases.column_text(4),
                       .max_abs_err = cases.column_double(5),
                       .max_rel_err = cases.column_double(6),
                       .mismatches = cases.column_int64(7),
                       .nonfinite_mismatches = cases.column_int64(8),
                       .first_index = cases.column_int64(9),
                       .message = cases.column_text(10)});
  auto findings =
      db.prepare("SELECT kind, line, excerpt FROM static_findings WHERE evaluation_id = ? ORDER BY rowid",
                 what + ": static findings");
  findings.bind_all(evaluation_id);
  while (findings.step())
    e.findings.push_back({findings.column_text(0), findings.column_int(1), findings.column_text(2)});
  auto baselines =
      db.prepare("SELECT baseline_id FROM evaluation_baselines WHERE evaluation_id = ? ORDER BY baseline_id",
                 what + ": linked baselines");
  baselines.bind_all(evaluation_id);
  while (baselines.step())
    e.baseline_ids.push_back(baselines.column_int64(0));
}

} // namespace

std::optional<evaluation_record> store::get_evaluation(std::int64_t evaluation_id) const {
  const connection& db = m_impl->m_db;
  const std::string what = fmt::format("read evaluation {}", evaluation_id);
  auto row = db.prepare(
      "SELECT run_id, problem_id, candidate_id, stack_id, device, overrides_json, protocol, "
      "verdict, error, started_at, finished_at, duration_s, strict_verdict, strict_failed, "
      "degenerate, compatible_s, strict_s, build_key, purpose, reason FROM evaluations WHERE id = ?",
      what);
  row.bind_all(evaluation_id);
  if (!row.step()) return std::nullopt;
  evaluation_record e{.run_id = row.column_int64(0),
                      .problem_id = row.column_int64(1),
                      .candidate_id = row.column_int64(2),
                      .stack_id = row.column_int64(3),
                      .device = row.column_text(4),
                      .overrides_json = row.column_text(5),
                      .protocol = row.column_text(6),
                      .verdict = verdict_column(db, row.column_text(7), what),
                      .error = row.column_text(8),
                      .started_at = row.column_text(9),
                      .finished_at = row.column_text(10),
                      .duration_s = row.column_double(11)};
  e.strict_verdict = strict_verdict_column(db, row.column_text(12), what);
  e.strict_failed = row.column_text(13);
  e.degenerate = row.column_text(14);
  e.compatible_s = row.column_double(15);
  e.strict_s = row.column_double(16);
  e.build_key = row.column_text(17);
  e.purpose = row.column_text(18);
  e.reason = row.column_text(19);
  read_resources(db, evaluation_id, what, e);

  auto trials =
      db.prepare("SELECT trial_index, seed, passed, max_abs_err, max_rel_err, mismatches, detail_json "
                 "FROM trials WHERE evaluation_id = ? ORDER BY trial_index",
                 what + ": trials");
  trials.bind_all(evaluation_id);
  while (trials.step())
    e.trials.push_back({.index = trials.column_int(0),
                        .seed = static_cast<std::uint64_t>(trials.column_int64(1)),
                        .passed = trials.column_int64(2) != 0,
                        .max_abs_err = trials.column_double(3),
                        .max_rel_err = trials.column_double(4),
                        .mismatches = trials.column_int64(5),
                        .detail_json = trials.column_text(6)});

  auto timings =
      db.prepare("SELECT id, subject, method, clock, params_json, median_ms, mean_ms, min_ms, max_ms, "
                 "stdev_ms FROM timings WHERE evaluation_id = ? ORDER BY id",
                 what + ": timings");
  auto samples = db.prepare("SELECT value_ms FROM timing_samples WHERE timing_id = ? ORDER BY sample_index",
                            what + ": timing samples");
  timings.bind_all(evaluation_id);
  while (timings.step()) {
    timing_record t{.subject = timings.column_text(1),
                    .method = timings.column_text(2),
                    .clock = timings.column_text(3),
                    .params_json = timings.column_text(4),
                    .samples_ms = {},
                    .median_ms = timings.column_double(5),
                    .mean_ms = timings.column_double(6),
                    .min_ms = timings.column_double(7),
                    .max_ms = timings.column_double(8),
                    .stdev_ms = timings.column_double(9)};
    samples.bind_all(timings.column_int64(0));
    while (samples.step())
      t.samples_ms.push_back(samples.column_double(0));
    samples.reset();
    e.timings.push_back(std::move(t));
  }
  read_strict_children(db, evaluation_id, what, e);
  return e;
}

db_info store::info() const {
  const connection& db = m_impl->m_db;
  db_info info;
  info.path = m_impl->m_path;
  info.schema_version = read_user_version(db);
  const std::array<std::pair<const char*, std::int64_t db_info::*>, 6> counts{{
      {"runs", &db_info::runs},
      {"stacks", &db_info::stacks},
      {"problems", &db_info::problems},
      {"candidates", &db_info::candidates},
      {"evaluations", &db_info::evaluations},
      {"timing_samples", &db_info::timing_samples},
  }};
  for (const auto& [table, member] : counts)
    info.*member =
        db.query_int64(fmt::format("SELECT count(*) FROM {}", table), fmt::format("count {}", table));
  return info;
}

} // namespace kj::db
