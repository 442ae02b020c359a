// The store's run maintenance (schema v9): a run's detail and config, its failed candidates, and removing a
// run with everything recorded under it.
#include "db/store.hpp"
#include "db/store_impl.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

namespace kj::db {

using sqlite::connection;

void store::set_run_detail(std::int64_t run_id, const std::string& detail) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("set the detail of run {}", run_id);
  db.prepare("UPDATE runs SET detail = ? WHERE id = ?", what).bind_all(detail, run_id).run();
  if (db.changes() != 1) db.fail(what, "no such run");
}

void store::set_run_config(std::int64_t run_id, const std::string& config_json) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("set the config of run {}", run_id);
  db.prepare("UPDATE runs SET config_json = ? WHERE id = ?", what).bind_all(config_json, run_id).run();
  if (db.changes() != 1) db.fail(what, "no such run");
}

bool store::run_is_empty(std::int64_t run_id) const {
  auto count =
      m_impl->m_db.prepare("SELECT (SELECT count(*) FROM evaluations WHERE run_id = ?1) + (SELECT count(*) "
                           "FROM llm_exchanges WHERE "
                           "run_id = ?1) + (SELECT count(*) FROM agent_trajectories WHERE run_id = ?1)",
                           fmt::format("count what run {} holds", run_id));
  count.bind_all(run_id);
  count.step();
  return count.column_int64(0) == 0;
}

void store::set_run_producer(std::int64_t run_id, const std::string& producer) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("set the producer of run {}", run_id);
  db.prepare("UPDATE runs SET producer = ? WHERE id = ?", what).bind_all(producer, run_id).run();
  if (db.changes() != 1) db.fail(what, "no such run");
}

namespace {

// The candidates whose result evaluation in the run counts as correct (`passed`), or does not.
std::vector<std::int64_t> candidates_by_outcome(connection& db, std::int64_t run_id, bool passed) {
  auto rows =
      db.prepare("SELECT candidate_id FROM evaluations WHERE run_id = ? AND purpose = 'result' AND " +
                     counted_correct_sql("") + " = ? ORDER BY candidate_id",
                 fmt::format("list the {} candidates of run {}", passed ? "passed" : "failed", run_id));
  rows.bind_all(run_id, passed ? 1 : 0);
  std::vector<std::int64_t> ids;
  while (rows.step())
    ids.push_back(rows.column_int64(0));
  return ids;
}

} // namespace

std::vector<std::int64_t> store::failed_candidates(std::int64_t run_id) const {
  return candidates_by_outcome(m_impl->m_db, run_id, false);
}

std::vector<std::int64_t> store::passed_candidates(std::int64_t run_id) const {
  return candidates_by_outcome(m_impl->m_db, run_id, true);
}

void store::remove_run(std::int64_t run_id) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("remove run {}", run_id);
  sqlite::transaction tx(db);
  // A replay's candidates name the exchanges they were answered from: those runs must go first.
  auto replayed =
      db.prepare("SELECT DISTINCT r.run_uid FROM candidate_origins o JOIN runs r ON r.id = o.run_id "
                 "WHERE o.run_id <> ?1 AND o.exchange_id IN (SELECT id FROM llm_exchanges WHERE "
                 "run_id = ?1)",
                 what);
  replayed.bind_all(run_id);
  if (replayed.step())
    db.fail(what, fmt::format("run {} replays its recorded answers; remove that run first",
                              replayed.column_text(0)));
  // Children before parents (foreign keys are on); trials, timings, cases, findings and baseline links go
  // with their evaluation (ON DELETE CASCADE).
  for (const char* sql : {
           "DELETE FROM agent_tool_calls WHERE turn_id IN (SELECT t.id FROM agent_turns t JOIN "
           "agent_trajectories "
           "a ON a.id = t.trajectory_id WHERE a.run_id = ?1)",
           "DELETE FROM agent_turns WHERE trajectory_id IN (SELECT id FROM agent_trajectories WHERE run_id = "
           "?1)",
           "DELETE FROM agent_trajectories WHERE run_id = ?1",
           "DELETE FROM evaluation_memory WHERE evaluation_id IN (SELECT id FROM evaluations WHERE run_id = "
           "?1)",
           "DELETE FROM evaluation_phases WHERE evaluation_id IN (SELECT id FROM evaluations WHERE run_id = "
           "?1)",
           "DELETE FROM evaluations WHERE run_id = ?1",
           "DELETE FROM candidate_origins WHERE run_id = ?1",
           "UPDATE llm_generations SET replayed_from = NULL WHERE replayed_from = ?1",
           "DELETE FROM llm_generations WHERE run_id = ?1",
           "DELETE FROM llm_batches WHERE run_id = ?1",
           "DELETE FROM llm_exchanges WHERE run_id = ?1",
           "DELETE FROM run_parts WHERE run_id = ?1",
           "DELETE FROM runs WHERE id = ?1",
       })
    db.prepare(sql, what).bind_all(run_id).run();
  tx.commit();
}

} // namespace kj::db
