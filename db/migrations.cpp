// Schema migrations as SQL text, oldest first, and the runner that applies the pending ones in one
// transaction.
#include "db/migrations.hpp"

#include "core/hashing.hpp"
#include "db/schema_sql_early.hpp"
#include "db/schema_sql_late.hpp"
#include "db/store.hpp"

#include <array>
#include <fmt/format.h>

namespace kj::db {

namespace {

using namespace schema_sql;

// The SQL of each version: db/schema_sql_early.hpp (1-4) and db/schema_sql_late.hpp (5-11).

// Sized by its entries: a new migration is one line here and the schema_version bump in store.hpp.
constexpr auto all_migrations = std::to_array<migration>({
    {1, "runs, stacks, problems, candidates, evaluations, trials, timings, timing_samples", schema_v1},
    {2, "strict verdict: verification_cases, static_findings, evaluation columns", schema_v2},
    {3, "baselines: measured and imported, their samples, the ones each evaluation used", schema_v3},
    {4, "LLM adapters: llm_exchanges, candidate_origins, llm_generations", schema_v4},
    {5, "content-addressed builds: builds, evaluations.build_key", schema_v5},
    {6, "merged runs: run_parts", schema_run_parts},
    {7, "built-in agent: evaluations.purpose, agent_trajectories, agent_turns, agent_tool_calls",
     schema_agent},
    {8, "evaluation resources: evaluations.reason, evaluation_memory, evaluation_phases", schema_resources},
    {9, "candidates.source_bytes, runs.producer, runs.detail", schema_first_hour},
    {10, "the problem audit: problem_audits", schema_audits},
    {11, "reasoning tokens (llm_exchanges, agent_trajectories, agent_turns), provider batches: llm_batches",
     schema_reasoning},
});
static_assert(all_migrations.back().version == schema_version,
              "add a migration for every schema_version bump");

// Foreign keys off for the guard's life, back on after when they were on: a migration that rebuilds a table
// must not cascade its DROP into the children (the pragma does nothing inside a transaction: set it before).
class foreign_keys_off {
public:
  explicit foreign_keys_off(sqlite::connection& db)
      : m_db(db), m_were_on(db.query_int64("PRAGMA foreign_keys", "read foreign_keys") != 0) {
    m_db.exec("PRAGMA foreign_keys = OFF", "turn foreign keys off for the migration");
  }
  ~foreign_keys_off() {
    if (!m_were_on) return;
    try {
      m_db.exec("PRAGMA foreign_keys = ON", "turn foreign keys back on");
    } catch (...) { // a destructor must not throw; the next statement fails loudly anyway
    }
  }
  foreign_keys_off(const foreign_keys_off&) = delete;
  foreign_keys_off& operator=(const foreign_keys_off&) = delete;

private:
  sqlite::connection& m_db;
  bool m_were_on;
};

} // namespace

std::span<const migration> migrations() {
  return all_migrations;
}

int read_user_version(const sqlite::connection& db) {
  return static_cast<int>(db.query_int64("PRAGMA user_version", "read the schema version"));
}

void require_not_newer(const sqlite::connection& db, int version, int supported) {
  if (version > supported)
    throw db_error(
        fmt::format("database '{}' has schema version {}, newer than the {} this build of kerneljudge "
                    "supports; use a newer kj to open it",
                    db.path(), version, supported));
}

void migrate(sqlite::connection& db, std::span<const migration> steps) {
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].version != static_cast<int>(i) + 1)
      throw db_error(fmt::format("migration list is not numbered 1, 2, ...: entry {} has version {}", i,
                                 steps[i].version));
  const int target = steps.empty() ? 0 : steps.back().version;

  const int before = read_user_version(db);
  require_not_newer(db, before, target);
  if (before == target) return;

  const foreign_keys_off keys_off(db);
  sqlite::transaction tx(db);
  // Read again under the write lock: another process may have migrated while we waited for it.
  const int current = read_user_version(db);
  require_not_newer(db, current, target);
  if (current == target) return;
  for (const migration& step : steps) {
    if (step.version <= current) continue;
    db.exec(step.sql, fmt::format("migrate to schema version {} ({})", step.version, step.description));
    db.prepare("INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
               "record a migration")
        .bind_all(step.version, step.description, core::now_iso8601())
        .run();
  }
  if (db.prepare("PRAGMA foreign_key_check", "check foreign keys after the migration").step())
    db.fail("migrate to schema version " + std::to_string(target), "a foreign key points nowhere");
  db.exec(fmt::format("PRAGMA user_version = {}", target), "set the schema version");
  tx.commit();
}

} // namespace kj::db
