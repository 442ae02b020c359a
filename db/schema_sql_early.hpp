// The SQL text of schema versions 1 to 4, for db/migrations.cpp alone. docs/schema.md describes every column;
// keep the two in step. Never edit a released migration: add a new one.
#pragma once

namespace kj::db::schema_sql {

// Version 1: runs, stacks, problems, candidates, evaluations with their trials, timings and raw samples.
// docs/schema.md describes every column; keep the two in step. Never edit a released migration: add a new
// one.
inline constexpr const char* schema_v1 = R"sql(
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
inline constexpr const char* schema_v2 = R"sql(
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
inline constexpr const char* schema_v3 = R"sql(
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
inline constexpr const char* schema_v4 = R"sql(
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

} // namespace kj::db::schema_sql
