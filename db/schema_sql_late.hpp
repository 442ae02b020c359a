// The SQL text of schema versions 5 to 10, for db/migrations.cpp alone. docs/schema.md describes every
// column; keep the two in step. Never edit a released migration: add a new one.
#pragma once

namespace kj::db::schema_sql {

// Version 5: content-addressed builds. Each distinct candidate source compiles in its own folder, keyed by a
// hash of the source and what the compiled code depends on; the result and the compiler's log are kept with
// the candidate, and an evaluation names the build it ran.
inline constexpr const char* schema_v5 = R"sql(
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
inline constexpr const char* schema_run_parts = R"sql(
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
inline constexpr const char* schema_agent = R"sql(
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
inline constexpr const char* schema_resources = R"sql(
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

// Version 10: the problem audit (kj audit). Null candidates judged by both rules on each problem, before any
// candidate: one row per audit, the newest per problem and device is the one reports read.
constexpr const char* schema_audits = R"sql(
CREATE TABLE problem_audits (
  id                 INTEGER PRIMARY KEY,
  problem_id         INTEGER NOT NULL REFERENCES problems(id),
  stack_id           INTEGER NOT NULL REFERENCES stacks(id),
  device             TEXT NOT NULL,
  protocol           TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  unsound            INTEGER NOT NULL CHECK (unsound IN (0, 1)),
  stochastic         INTEGER NOT NULL CHECK (stochastic IN (0, 1)),
  constant_reference INTEGER NOT NULL CHECK (constant_reference IN (0, 1)),
  tolerance_use      REAL,
  reasons            TEXT NOT NULL DEFAULT '',
  notes              TEXT NOT NULL DEFAULT '',
  nulls_json         TEXT NOT NULL DEFAULT '{}',
  error              TEXT NOT NULL DEFAULT ''
);
CREATE INDEX problem_audits_problem ON problem_audits(problem_id, device);
)sql";

// Version 11: reasoning tokens in a bucket of their own, where the provider counts them (OpenAI's
// reasoning_tokens, Gemini's thoughtsTokenCount); they stay counted in output_tokens too, as billed. And the
// provider batches a generating run submitted (kj generate --batch): recorded before they are polled, so
// that a killed run resumes polling the same batch and nothing is billed twice.
constexpr const char* schema_reasoning = R"sql(
ALTER TABLE llm_exchanges ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_trajectories ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_turns ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
CREATE TABLE llm_batches (
  id          INTEGER PRIMARY KEY,
  run_id      INTEGER NOT NULL REFERENCES runs(id),
  provider    TEXT NOT NULL,
  batch_id    TEXT NOT NULL,
  status      TEXT NOT NULL,
  items_json  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  finished_at TEXT NOT NULL DEFAULT '',
  UNIQUE (run_id, batch_id)
);
)sql";

} // namespace kj::db::schema_sql
