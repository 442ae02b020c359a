// Schema migrations as SQL text, oldest first, and the runner that applies the pending ones in one
// transaction.
#include "db/migrations.hpp"

#include "db/store.hpp"

#include <array>
#include <fmt/format.h>

namespace kj::db {

namespace {

// Version 1: runs, stacks, problems, candidates, evaluations with their trials, timings and raw samples.
// docs/schema.md describes every column; keep the two in step. Never edit a released migration: add a new
// one.
constexpr const char* schema_v1 = R"sql(
CREATE TABLE schema_migrations (
  version     INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at  TEXT NOT NULL
);

CREATE TABLE stacks (
  id               INTEGER PRIMARY KEY,
  stack_hash       TEXT NOT NULL UNIQUE,
  python           TEXT NOT NULL,
  torch            TEXT NOT NULL,
  device_name      TEXT NOT NULL,
  fingerprint_json TEXT NOT NULL,
  created_at       TEXT NOT NULL
);

CREATE TABLE runs (
  id           INTEGER PRIMARY KEY,
  run_uid      TEXT NOT NULL UNIQUE,
  created_at   TEXT NOT NULL,
  status       TEXT NOT NULL,
  device       TEXT NOT NULL,
  command_line TEXT NOT NULL,
  kj_version   TEXT NOT NULL,
  config_json  TEXT NOT NULL,
  stack_id     INTEGER REFERENCES stacks(id)
);
CREATE INDEX runs_created_at ON runs(created_at);
CREATE INDEX runs_stack_id ON runs(stack_id);

CREATE TABLE problems (
  id            INTEGER PRIMARY KEY,
  suite         TEXT NOT NULL,
  kb_version    TEXT NOT NULL,
  level         INTEGER NOT NULL,
  number        INTEGER NOT NULL,
  name          TEXT NOT NULL,
  file_name     TEXT NOT NULL,
  path          TEXT NOT NULL,
  source        TEXT NOT NULL,
  source_hash   TEXT NOT NULL,
  source_commit TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  UNIQUE (suite, kb_version, level, file_name, source_hash)
);
CREATE INDEX problems_order ON problems(suite, level, number);

CREATE TABLE candidates (
  id          INTEGER PRIMARY KEY,
  problem_id  INTEGER NOT NULL REFERENCES problems(id),
  producer    TEXT NOT NULL,
  sample      INTEGER NOT NULL,
  path        TEXT NOT NULL,
  source      TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  UNIQUE (problem_id, producer, sample, source_hash),
  UNIQUE (id, problem_id)
);

CREATE TABLE evaluations (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  problem_id     INTEGER NOT NULL REFERENCES problems(id),
  candidate_id   INTEGER NOT NULL,
  stack_id       INTEGER NOT NULL REFERENCES stacks(id),
  device         TEXT NOT NULL,
  overrides_json TEXT NOT NULL,
  protocol       TEXT NOT NULL,
  verdict        TEXT NOT NULL,
  error          TEXT NOT NULL,
  started_at     TEXT NOT NULL,
  finished_at    TEXT NOT NULL,
  duration_s     REAL,
  UNIQUE (run_id, candidate_id),
  FOREIGN KEY (candidate_id, problem_id) REFERENCES candidates(id, problem_id)
);
CREATE INDEX evaluations_problem_id ON evaluations(problem_id);
CREATE INDEX evaluations_candidate_id ON evaluations(candidate_id, problem_id);
CREATE INDEX evaluations_stack_id ON evaluations(stack_id);
CREATE INDEX evaluations_verdict ON evaluations(verdict);

CREATE TABLE trials (
  id            INTEGER PRIMARY KEY,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  trial_index   INTEGER NOT NULL,
  seed          INTEGER NOT NULL,
  passed        INTEGER NOT NULL CHECK (passed IN (0, 1)),
  max_abs_err   REAL,
  max_rel_err   REAL,
  mismatches    INTEGER NOT NULL,
  detail_json   TEXT NOT NULL,
  UNIQUE (evaluation_id, trial_index)
);

CREATE TABLE timings (
  id            INTEGER PRIMARY KEY,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  subject       TEXT NOT NULL,
  method        TEXT NOT NULL,
  clock         TEXT NOT NULL,
  params_json   TEXT NOT NULL,
  median_ms     REAL,
  mean_ms       REAL,
  min_ms        REAL,
  max_ms        REAL,
  stdev_ms      REAL,
  UNIQUE (evaluation_id, subject, method, clock)
);

CREATE TABLE timing_samples (
  timing_id    INTEGER NOT NULL REFERENCES timings(id) ON DELETE CASCADE,
  sample_index INTEGER NOT NULL,
  value_ms     REAL,
  PRIMARY KEY (timing_id, sample_index)
) WITHOUT ROWID;
)sql";

// Version 2: the strict verdict with its case classes, static findings and degenerate-problem labels.
constexpr const char* schema_v2 = R"sql(
ALTER TABLE evaluations ADD COLUMN strict_verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN strict_failed TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN degenerate TEXT NOT NULL DEFAULT '';
ALTER TABLE evaluations ADD COLUMN compatible_s REAL;
ALTER TABLE evaluations ADD COLUMN strict_s REAL;

CREATE TABLE verification_cases (
  id                   INTEGER PRIMARY KEY,
  evaluation_id        INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  case_class           TEXT NOT NULL,
  case_index           INTEGER NOT NULL,
  seed                 INTEGER NOT NULL,
  status               TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'uninformative')),
  judged_against       TEXT NOT NULL,
  max_abs_err          REAL,
  max_rel_err          REAL,
  mismatches           INTEGER NOT NULL,
  nonfinite_mismatches INTEGER NOT NULL,
  first_index          INTEGER NOT NULL,
  message              TEXT NOT NULL,
  UNIQUE (evaluation_id, case_class, case_index)
);
CREATE INDEX verification_cases_class ON verification_cases(case_class, status);

CREATE TABLE static_findings (
  id            INTEGER PRIMARY KEY,
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  kind          TEXT NOT NULL,
  line          INTEGER NOT NULL,
  excerpt       TEXT NOT NULL
);
CREATE INDEX static_findings_evaluation ON static_findings(evaluation_id);
)sql";

// Version 3: baselines (eager and torch.compile modes) measured once per cache key, or imported from
// KernelBench's timing JSONs, with their raw samples; evaluations name the cached baselines they were
// compared with.
constexpr const char* schema_v3 = R"sql(
CREATE TABLE baselines (
  id             INTEGER PRIMARY KEY,
  cache_key      TEXT NOT NULL,
  key_json       TEXT NOT NULL,
  origin         TEXT NOT NULL CHECK (origin IN ('measured', 'imported')),
  problem_id     INTEGER REFERENCES problems(id),
  stack_id       INTEGER REFERENCES stacks(id),
  level          INTEGER NOT NULL,
  file_name      TEXT NOT NULL,
  mode           TEXT NOT NULL,
  device         TEXT NOT NULL,
  precision      TEXT NOT NULL,
  overrides_json TEXT NOT NULL,
  status         TEXT NOT NULL,
  error          TEXT NOT NULL,
  compile_s      REAL,
  warm_compile_s REAL,
  method         TEXT NOT NULL,
  clock          TEXT NOT NULL,
  params_json    TEXT NOT NULL,
  median_ms      REAL,
  mean_ms        REAL,
  min_ms         REAL,
  max_ms         REAL,
  stdev_ms       REAL,
  hardware       TEXT NOT NULL,
  imported_from  TEXT NOT NULL,
  created_at     TEXT NOT NULL
);
CREATE INDEX baselines_cache_key ON baselines(cache_key, id);
CREATE INDEX baselines_problem ON baselines(level, file_name, mode);

CREATE TABLE baseline_samples (
  baseline_id  INTEGER NOT NULL REFERENCES baselines(id) ON DELETE CASCADE,
  sample_index INTEGER NOT NULL,
  value_ms     REAL,
  PRIMARY KEY (baseline_id, sample_index)
) WITHOUT ROWID;

CREATE TABLE evaluation_baselines (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  baseline_id   INTEGER NOT NULL REFERENCES baselines(id),
  PRIMARY KEY (evaluation_id, baseline_id)
) WITHOUT ROWID;
)sql";

// Version 4: what the LLM adapters did. Every exchange with a provider (the request without secrets, the
// response, usage in four buckets, cost, timing), keyed by a hash of the request content, so that a run can
// be replayed offline; and the origin of each generated candidate within a run (adapter, model, prompt hash,
// sample, request id, whether the reply had usable code); and the settings each generating run used, which
// a replay reads to send the same requests again.
constexpr const char* schema_v4 = R"sql(
CREATE TABLE llm_exchanges (
  id                 INTEGER PRIMARY KEY,
  run_id             INTEGER NOT NULL REFERENCES runs(id),
  provider           TEXT NOT NULL,
  model              TEXT NOT NULL,
  endpoint           TEXT NOT NULL,
  request_hash       TEXT NOT NULL,
  seq                INTEGER NOT NULL,
  purpose            TEXT NOT NULL,
  request_json       TEXT NOT NULL,
  http_status        INTEGER,
  response_body      TEXT NOT NULL,
  ok                 INTEGER NOT NULL CHECK (ok IN (0, 1)),
  error_kind         TEXT NOT NULL,
  error              TEXT NOT NULL,
  request_id         TEXT NOT NULL,
  stop_reason        TEXT NOT NULL,
  input_tokens       INTEGER NOT NULL,
  cache_read_tokens  INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  cost_usd           REAL,
  latency_ms         REAL NOT NULL,
  total_ms           REAL NOT NULL,
  attempts           INTEGER NOT NULL,
  attempts_json      TEXT NOT NULL,
  started_at         TEXT NOT NULL,
  finished_at        TEXT NOT NULL
);
CREATE INDEX llm_exchanges_lookup ON llm_exchanges(run_id, request_hash, seq, id);

CREATE TABLE candidate_origins (
  id           INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  exchange_id  INTEGER REFERENCES llm_exchanges(id),
  adapter      TEXT NOT NULL,
  model        TEXT NOT NULL,
  prompt_hash  TEXT NOT NULL,
  sample       INTEGER NOT NULL,
  request_id   TEXT NOT NULL,
  extraction   TEXT NOT NULL,
  detail       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  UNIQUE (candidate_id, run_id)
);
CREATE INDEX candidate_origins_run ON candidate_origins(run_id);
CREATE INDEX candidate_origins_exchange ON candidate_origins(exchange_id);

CREATE TABLE llm_generations (
  run_id        INTEGER PRIMARY KEY REFERENCES runs(id),
  adapter       TEXT NOT NULL,
  model         TEXT NOT NULL,
  replayed_from INTEGER REFERENCES runs(id),
  settings_json TEXT NOT NULL,
  created_at    TEXT NOT NULL
);
)sql";

// Version 5: content-addressed builds. Each distinct candidate source compiles in its own folder, keyed by a
// hash of the source and what the compiled code depends on; the result and the compiler's log are kept with
// the candidate, and an evaluation names the build it ran.
constexpr const char* schema_v5 = R"sql(
CREATE TABLE builds (
  id           INTEGER PRIMARY KEY,
  candidate_id INTEGER NOT NULL REFERENCES candidates(id),
  build_key    TEXT NOT NULL,
  device       TEXT NOT NULL,
  status       TEXT NOT NULL,
  seconds      REAL NOT NULL,
  log          TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  UNIQUE (candidate_id, build_key)
);
ALTER TABLE evaluations ADD COLUMN build_key TEXT NOT NULL DEFAULT '';
)sql";

// Version 6: the parts a merged run was combined from (kj merge). A sharded run writes one DB per shard under
// the same run_uid; merging them makes one run whose parts say which shards (and which resumptions of them)
// it holds, with each part's status and evaluation count, so that a missing or unfinished shard is visible.
// (Named for what it holds, not its number: the built-in agent's branch also adds a migration, and when both
// land one of them is renumbered by changing its line in the list below.)
constexpr const char* schema_run_parts = R"sql(
CREATE TABLE run_parts (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id),
  shard        TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  status       TEXT NOT NULL,
  command_line TEXT NOT NULL,
  source_file  TEXT NOT NULL,
  evaluations  INTEGER NOT NULL,
  merged_at    TEXT NOT NULL,
  UNIQUE (run_id, shard, created_at)
);
)sql";

// Version 7: the built-in agent. A trajectory is one attempt at one problem (settings, prompts, budget use,
// how it ended, the selected and final candidates and the fresh re-measurement that is its result); a turn is
// one call to the model (what kj added before it, what the model said, usage and cost); a tool call is one
// action of a turn and what it returned. In-loop evaluations are ordinary evaluation rows named by their tool
// call.
//
// The agent judges one version of its code several times in a run (verify, profile, then the re-measurement):
// evaluations gets a purpose, and (run, candidate) stays unique among results only. SQLite drops a table
// constraint only by rebuilding the table (migrate() turns foreign keys off while it runs, so that dropping
// the old table does not cascade into trials, timings and cases, and checks them before the commit).
constexpr const char* schema_agent = R"sql(
CREATE TABLE evaluations_v7 (
  id             INTEGER PRIMARY KEY,
  run_id         INTEGER NOT NULL REFERENCES runs(id),
  problem_id     INTEGER NOT NULL REFERENCES problems(id),
  candidate_id   INTEGER NOT NULL,
  stack_id       INTEGER NOT NULL REFERENCES stacks(id),
  device         TEXT NOT NULL,
  overrides_json TEXT NOT NULL,
  protocol       TEXT NOT NULL,
  verdict        TEXT NOT NULL,
  error          TEXT NOT NULL,
  started_at     TEXT NOT NULL,
  finished_at    TEXT NOT NULL,
  duration_s     REAL,
  strict_verdict TEXT NOT NULL DEFAULT '',
  strict_failed  TEXT NOT NULL DEFAULT '',
  degenerate     TEXT NOT NULL DEFAULT '',
  compatible_s   REAL,
  strict_s       REAL,
  build_key      TEXT NOT NULL DEFAULT '',
  purpose        TEXT NOT NULL DEFAULT 'result' CHECK (purpose IN ('result', 'agent_loop')),
  FOREIGN KEY (candidate_id, problem_id) REFERENCES candidates(id, problem_id)
);
INSERT INTO evaluations_v7 (id, run_id, problem_id, candidate_id, stack_id, device, overrides_json, protocol,
                            verdict, error, started_at, finished_at, duration_s, strict_verdict, strict_failed,
                            degenerate, compatible_s, strict_s, build_key)
  SELECT id, run_id, problem_id, candidate_id, stack_id, device, overrides_json, protocol, verdict, error,
         started_at, finished_at, duration_s, strict_verdict, strict_failed, degenerate, compatible_s, strict_s,
         build_key
  FROM evaluations;
DROP TABLE evaluations;
ALTER TABLE evaluations_v7 RENAME TO evaluations;
CREATE UNIQUE INDEX evaluations_result ON evaluations(run_id, candidate_id) WHERE purpose = 'result';
CREATE INDEX evaluations_problem_id ON evaluations(problem_id);
CREATE INDEX evaluations_candidate_id ON evaluations(candidate_id, problem_id);
CREATE INDEX evaluations_stack_id ON evaluations(stack_id);
CREATE INDEX evaluations_verdict ON evaluations(verdict);

CREATE TABLE agent_trajectories (
  id                     INTEGER PRIMARY KEY,
  run_id                 INTEGER NOT NULL REFERENCES runs(id),
  problem_id             INTEGER NOT NULL REFERENCES problems(id),
  attempt                INTEGER NOT NULL,
  producer               TEXT NOT NULL,
  adapter                TEXT NOT NULL,
  model                  TEXT NOT NULL,
  prompt_hash            TEXT NOT NULL,
  system_prompt          TEXT NOT NULL,
  task_prompt            TEXT NOT NULL,
  settings_json          TEXT NOT NULL,
  workspace              TEXT NOT NULL,
  status                 TEXT NOT NULL,
  stop_detail            TEXT NOT NULL,
  turns                  INTEGER NOT NULL,
  input_tokens           INTEGER NOT NULL,
  cache_read_tokens      INTEGER NOT NULL,
  cache_write_tokens     INTEGER NOT NULL,
  output_tokens          INTEGER NOT NULL,
  cost_usd               REAL,
  wall_s                 REAL NOT NULL,
  selected_candidate_id  INTEGER REFERENCES candidates(id),
  selected_evaluation_id INTEGER REFERENCES evaluations(id),
  final_candidate_id     INTEGER REFERENCES candidates(id),
  final_evaluation_id    INTEGER REFERENCES evaluations(id),
  result_evaluation_id   INTEGER REFERENCES evaluations(id),
  speedup_baseline       TEXT NOT NULL,
  inloop_speedup         REAL,
  remeasured_speedup     REAL,
  started_at             TEXT NOT NULL,
  finished_at            TEXT NOT NULL
);

CREATE TABLE agent_turns (
  id                 INTEGER PRIMARY KEY,
  trajectory_id      INTEGER NOT NULL REFERENCES agent_trajectories(id),
  turn               INTEGER NOT NULL,
  exchange_id        INTEGER REFERENCES llm_exchanges(id),
  user_note          TEXT NOT NULL,
  context_note       TEXT NOT NULL,
  context_tokens     INTEGER NOT NULL,
  text               TEXT NOT NULL,
  thinking           TEXT NOT NULL,
  stop_reason        TEXT NOT NULL,
  input_tokens       INTEGER NOT NULL,
  cache_read_tokens  INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  cost_usd           REAL,
  latency_ms         REAL NOT NULL,
  started_at         TEXT NOT NULL,
  finished_at        TEXT NOT NULL,
  UNIQUE (trajectory_id, turn)
);

CREATE TABLE agent_tool_calls (
  id             INTEGER PRIMARY KEY,
  turn_id        INTEGER NOT NULL REFERENCES agent_turns(id),
  seq            INTEGER NOT NULL,
  call_id        TEXT NOT NULL,
  tool           TEXT NOT NULL,
  arguments_json TEXT NOT NULL,
  result         TEXT NOT NULL,
  summary        TEXT NOT NULL,
  is_error       INTEGER NOT NULL CHECK (is_error IN (0, 1)),
  candidate_id   INTEGER REFERENCES candidates(id),
  evaluation_id  INTEGER REFERENCES evaluations(id),
  seconds        REAL NOT NULL,
  UNIQUE (turn_id, seq)
);
CREATE INDEX agent_trajectories_run ON agent_trajectories(run_id, problem_id, attempt);
CREATE INDEX agent_tool_calls_evaluation ON agent_tool_calls(evaluation_id);
)sql";

// Version 8: what an evaluation cost. Its verdict's reason (out_of_memory for a runtime_error or a
// harness_error, tolerance or mismatch for an incorrect one); the memory it held (the device's sampled peak,
// each process's peak device and host memory, the memory model's budget); the wall time of each of its
// phases. A strict case kj could not judge (its own failure) has status harness_error: verification_cases is
// rebuilt for its CHECK.
constexpr const char* schema_resources = R"sql(
CREATE TABLE verification_cases_v8 (
  id                   INTEGER PRIMARY KEY,
  evaluation_id        INTEGER NOT NULL REFERENCES evaluations(id) ON DELETE CASCADE,
  case_class           TEXT NOT NULL,
  case_index           INTEGER NOT NULL,
  seed                 INTEGER NOT NULL,
  status               TEXT NOT NULL CHECK (status IN ('pass', 'fail', 'uninformative', 'harness_error')),
  judged_against       TEXT NOT NULL,
  max_abs_err          REAL,
  max_rel_err          REAL,
  mismatches           INTEGER NOT NULL,
  nonfinite_mismatches INTEGER NOT NULL,
  first_index          INTEGER NOT NULL,
  message              TEXT NOT NULL,
  UNIQUE (evaluation_id, case_class, case_index)
);
INSERT INTO verification_cases_v8 SELECT * FROM verification_cases;
DROP TABLE verification_cases;
ALTER TABLE verification_cases_v8 RENAME TO verification_cases;
CREATE INDEX verification_cases_class ON verification_cases(case_class, status);
ALTER TABLE evaluations ADD COLUMN reason TEXT NOT NULL DEFAULT '';
CREATE TABLE evaluation_memory (
  evaluation_id       INTEGER PRIMARY KEY REFERENCES evaluations(id),
  device_peak_bytes   INTEGER,
  judge_device_bytes  INTEGER,
  runner_device_bytes INTEGER,
  judge_rss_bytes     INTEGER,
  runner_rss_bytes    INTEGER,
  budget_bytes        INTEGER
);
CREATE TABLE evaluation_phases (
  evaluation_id INTEGER NOT NULL REFERENCES evaluations(id),
  phase         TEXT NOT NULL,
  seconds       REAL NOT NULL,
  PRIMARY KEY (evaluation_id, phase)
);
)sql";

// Version 9: a candidate file that is not UTF-8 keeps its bytes (candidates.source is the text it was judged
// as); a run has a producer label (the model or folder its candidates came from) and a detail (why it failed,
// and the option changes a forced resume accepted).
constexpr const char* schema_first_hour = R"sql(
ALTER TABLE candidates ADD COLUMN source_bytes BLOB;
ALTER TABLE runs ADD COLUMN producer TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN detail TEXT NOT NULL DEFAULT '';
)sql";

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
        .bind_all(step.version, step.description, now_iso8601())
        .run();
  }
  if (db.prepare("PRAGMA foreign_key_check", "check foreign keys after the migration").step())
    db.fail("migrate to schema version " + std::to_string(target), "a foreign key points nowhere");
  db.exec(fmt::format("PRAGMA user_version = {}", target), "set the schema version");
  tx.commit();
}

} // namespace kj::db
