// The data-access layer: the only code in kerneljudge that writes SQL. One writer per database file.
#pragma once

#include "core/precision.hpp"
#include "db/agent_records.hpp"
#include "db/audit_records.hpp"
#include "db/llm_records.hpp"
#include "db/rows.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::db {

namespace sqlite {
class transaction;
}

// Thrown for any database failure; the message names the database path and what was being done.
class db_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline constexpr int schema_version = 11;

struct run_record {
  std::string run_uid;      // user-visible id, e.g. "r20261120-235959-1a2b"
  std::string created_at;   // ISO-8601 UTC, filled by the store when empty
  std::string status;       // "running", "finished", "interrupted"
  std::string device;       // "cpu" or "cuda"
  std::string command_line; // argv joined with spaces
  std::string kj_version;   // "0.1.0+<git sha>"
  std::string config_json;  // the resolved run options as JSON
  std::int64_t stack_id = 0;
  std::string producer; // schema v9: who wrote its candidates (a model, an agent, a folder's name)
  std::string detail;   // schema v9: why it failed; the option changes a forced resume accepted
};

// One part of a merged run (table run_parts): a shard's run (or a whole run) that `kj merge` combined into
// it.
struct run_part_record {
  std::string shard;      // "i/N" (kj run --shard), "" when the part was not sharded
  std::string created_at; // the part's own runs.created_at: which run of that shard (with its resumptions)
  std::string status;     // the part's status when it was merged
  std::string command_line;
  std::string source_file;      // the database it was merged from
  std::int64_t evaluations = 0; // its evaluations in that file
  std::string merged_at;
};

struct stack_record {
  std::string stack_hash; // hash of the identity fields of the fingerprint
  std::string python;
  std::string torch;
  std::string device_name;
  std::string fingerprint_json; // every field measured, identity or not
};

struct problem_record {
  std::string suite;      // "kernelbench", "builtin" or "file"
  std::string kb_version; // "main", "v0.1", "v0" for KernelBench; "" otherwise
  int level = 0;
  int number = 0;        // the id before the first '_' of the file name
  std::string name;      // file stem after the id, e.g. "Square_matrix_multiplication_"
  std::string file_name; // e.g. "1_Square_matrix_multiplication_.py"
  std::string path;      // where it was loaded from
  std::string source;    // full text
  std::string source_hash;
  std::string source_commit; // git commit of the checkout when known
};

struct candidate_record {
  std::int64_t problem_id = 0;
  std::string producer; // "directory", "identity", "examples", ...
  int sample = 0;
  std::string path;         // file it came from ("" for generated ones)
  std::string source;       // the text it is judged as (valid UTF-8)
  std::string source_hash;  // of source_bytes when set, else of source
  std::string source_bytes; // schema v9: the file's bytes when they are not UTF-8 (else empty)
};

struct trial_record {
  int index = 0;
  std::uint64_t seed = 0;
  bool passed = false;
  double max_abs_err = 0;
  double max_rel_err = 0;
  std::int64_t mismatches = 0;
  std::string detail_json; // shapes, dtypes, messages
};

struct timing_record {
  std::string subject; // "candidate", "reference_eager", later "compile_default", ...
  std::string method;  // "host-median", later "robust", "kernelbench", "cuda-agent"
  std::string clock;   // "host" or "cuda-event"
  std::string params_json;
  std::vector<double> samples_ms; // raw, in measurement order
  double median_ms = 0, mean_ms = 0, min_ms = 0, max_ms = 0, stdev_ms = 0;
};

// One case of the strict verdict (schema v2): a case class run on one input set.
struct case_record {
  std::string
      case_class; // random, distribution, nan, inf, denormal, extreme, negzero, shape, determinism, ...
  int index = 0;
  std::uint64_t seed = 0;
  kj::case_status status = kj::case_status::fail;
  std::string judged_against; // "fp32" or "fp64" reference, "" when not a value comparison
  double max_abs_err = 0;
  double max_rel_err = 0; // relative to the RMS of the reference's finite values
  std::int64_t mismatches = 0;
  std::int64_t nonfinite_mismatches = 0; // NaN/+Inf/-Inf positions that differ
  std::int64_t first_index = -1;         // flat index of the first mismatch, -1 when none
  std::string message;
};

// Something found in the candidate's source that a reader should see next to the verdict (not a verdict).
struct finding_record {
  std::string kind; // e.g. torch_fallback, try_except, threads, streams, timer_patching, precision
  int line = 0;
  std::string excerpt;
};

// The wall time of one phase of an evaluation (schema v8) [s].
struct phase_record {
  std::string phase;
  double seconds = 0;
};

struct evaluation_record {
  std::int64_t run_id = 0;
  std::int64_t problem_id = 0;
  std::int64_t candidate_id = 0;
  std::int64_t stack_id = 0;
  std::string device;
  std::string overrides_json; // module-constant overrides applied, e.g. {"batch_size": 4}
  std::string protocol;       // e.g. "kernelbench-main"
  kj::verdict verdict = kj::verdict::harness_error; // named only in SQL (core/verdict.hpp)
  std::string error;                                // message or traceback, "" when none
  std::string started_at, finished_at;
  double duration_s = 0;
  std::vector<trial_record> trials;
  std::vector<timing_record> timings;
  // Schema v2: the strict verdict (none when it did not run), its failing classes (comma-separated), a label
  // when the problem looks degenerate, its cases and the static findings.
  kj::strict_verdict strict_verdict = kj::strict_verdict::none;
  std::string strict_failed;
  std::string degenerate;
  double compatible_s = 0; // [s] wall time of the compatible trials
  double strict_s = 0;     // [s] wall time of the strict case classes
  std::vector<case_record> cases;
  std::vector<finding_record> findings;
  std::vector<std::int64_t> baseline_ids; // schema v3: the cached baselines this evaluation is compared with
  std::string build_key;                  // schema v5: the content-addressed build it ran ("" when none)
  // Schema v7: "result" (kj run's evaluations, the agent's re-measurements: what reports count; one per run
  // and candidate) or "agent_loop" (a built-in agent's verify or profile while it worked: any number).
  std::string purpose = "result";
  // Schema v8: the verdict's reason (out_of_memory, tolerance, mismatch, or ""), the memory held, phase
  // times.
  std::string reason;
  std::optional<memory_record> memory;
  std::vector<phase_record> phases;
};

// A candidate's build (schema v5): one row per (candidate, build key), with the compiler's log.
struct build_row {
  std::int64_t candidate_id = 0;
  std::string build_key;
  std::string device;
  std::string status; // ok, compile_error, load_error, timeout, crashed, ...
  double seconds = 0; // [s] the build's wall time (of the first build, when it was cached)
  std::string log;
  std::string created_at;
};

// A baseline (schema v3): a problem's reference under one mode (eager, compile-default, max-autotune, ...),
// measured by kj under a cache key, or imported from a KernelBench timing JSON.
struct baseline_record {
  std::int64_t id = 0;
  std::string cache_key;           // sha256 of key_json; the lookup key of later runs
  std::string key_json;            // problem source hash, overrides, precision, mode, device, timing, stack
  std::string origin = "measured"; // "measured" or "imported"
  std::int64_t problem_id = 0;     // 0: unknown (an imported row whose problem is not in the DB)
  std::int64_t stack_id = 0;       // 0: none (imported)
  int level = 0;
  std::string file_name;
  std::string mode;   // eager, compile-default, max-autotune, max-autotune-no-cudagraphs, reduce-overhead
  std::string device; // cpu, cuda
  kj::precision precision = kj::precision::fp32;
  std::string overrides_json = "{}";
  std::string status =
      "ok"; // ok, compile_error, runtime_error, problem_error, oom, needs_weights, timeout, ...
  std::string error;
  std::optional<double> compile_s;      // [s] first compile, cold (the parallel compile pass)
  std::optional<double> warm_compile_s; // [s] compile in the timing worker, from the warm Inductor cache
  std::string method, clock, params_json = "{}";
  std::vector<double> samples_ms;
  std::optional<double> median_ms, mean_ms, min_ms, max_ms, stdev_ms;
  std::string hardware;      // GPU or CPU name; imported: the JSON's hardware label
  std::string imported_from; // imported: the JSON file
  std::string created_at;

  // [ms] the headline statistic: the mean for methods kernelbench/cuda-agent and imported rows, else median.
  std::optional<double> headline_ms() const;
};

struct db_info {
  std::filesystem::path path;
  int schema_version = 0;
  std::int64_t runs = 0, stacks = 0, problems = 0, candidates = 0, evaluations = 0, timing_samples = 0;
};

class store {
public:
  // Opens (creating if needed) and migrates the database forward; throws db_error naming the path if not.
  static store open(const std::filesystem::path& path);
  // Opens read-only without migrating; throws db_error if the file is missing or has another schema version.
  static store open_read_only(const std::filesystem::path& path);
  // The schema version of an existing database file (0: not a kerneljudge database), read without changing
  // it.
  static int file_version(const std::filesystem::path& path);

  store(store&&) noexcept;
  store& operator=(store&&) noexcept;
  ~store();

  // Groups several writes into one transaction: all of them are in the file, or (after a crash, a kill -9,
  // or an exception before commit()) none. The store's own multi-row writes nest inside it.
  class batch {
  public:
    explicit batch(store& s);
    batch(const batch&) = delete;
    batch& operator=(const batch&) = delete;
    ~batch(); // rolls back unless committed
    void commit();

  private:
    std::unique_ptr<sqlite::transaction> m_tx;
  };

  int user_version() const;
  // Writes a consistent copy of the database to `destination` (SQLite's VACUUM INTO, committed rows only,
  // readable while another process writes), through a temporary file renamed over it: a reader of
  // `destination` sees the old copy or the new one.
  void copy_to(const std::filesystem::path& destination) const;
  const std::filesystem::path& path() const;

  // Rows are deduplicated by their natural key; the existing id is returned when the row is already there
  // (its other fields are kept as first written). An empty source_hash is filled with
  // core::sha256_hex(source).
  std::int64_t upsert_stack(const stack_record& stack); // key: stack_hash
  // key: suite, kb_version, level, file_name, source_hash
  std::int64_t upsert_problem(const problem_record& problem);
  // key: problem_id, producer, sample, source_hash
  std::int64_t upsert_candidate(const candidate_record& candidate);

  std::int64_t create_run(const run_record& run);
  std::optional<std::int64_t> find_run(const std::string& run_uid) const;
  std::optional<run_record> get_run(std::int64_t run_id) const;
  std::optional<std::string> latest_run_uid() const;
  void set_run_status(std::int64_t run_id, const std::string& status);
  void set_run_stack(std::int64_t run_id, std::int64_t stack_id);
  // Schema v9 (db/store_runs.cpp): why a run failed (or what a forced resume changed); its config after a
  // forced resume; the candidates whose evaluation in the run failed (verdict not correct, or strict fail);
  // removing a run with everything recorded under it (its evaluations, exchanges, trajectories, parts), in
  // one transaction. Problems, candidates, stacks and baselines stay: other runs may share them.
  void set_run_detail(std::int64_t run_id, const std::string& detail);
  void set_run_config(std::int64_t run_id, const std::string& config_json);
  std::vector<std::int64_t> failed_candidates(std::int64_t run_id) const;
  // The candidates whose result evaluation in the run counts as correct (correct, strict not failed).
  std::vector<std::int64_t> passed_candidates(std::int64_t run_id) const;
  void remove_run(std::int64_t run_id);
  // Whether nothing was recorded under the run: no evaluation, LLM exchange or agent trajectory.
  bool run_is_empty(std::int64_t run_id) const;
  void set_run_producer(std::int64_t run_id, const std::string& producer);
  // The parts of a merged run by shard and creation time; none for a run that was never merged.
  std::vector<run_part_record> run_parts(std::int64_t run_id) const;

  // How many result evaluations the run holds (not the built-in agent's in-loop ones).
  std::int64_t evaluation_count(std::int64_t run_id) const;
  // Whether this run already holds an evaluation of this candidate (for resuming a run).
  bool has_evaluation(std::int64_t run_id, std::int64_t candidate_id) const;
  // Writes the evaluation with its trials, timings and raw samples in one transaction. stack_id 0 means the
  // run's stack (one is required); problem_id 0 means the candidate's problem (another one is refused).
  std::int64_t insert_evaluation(const evaluation_record& evaluation);
  // Reads an evaluation back whole: its trials (by index), timings (in insertion order) with their raw
  // samples, the strict verdict's fields, cases and findings (in insertion order) and the linked baseline ids
  // (ascending).
  std::optional<evaluation_record> get_evaluation(std::int64_t evaluation_id) const;

  // Reads for reports (rows as stored; reports/metrics.hpp derives speedups and intervals from them).
  // Result evaluations (purpose "result": not the built-in agent's in-loop ones) matching the filter, ordered
  // by suite, level, number, producer, sample, run creation, id.
  std::vector<evaluation_row> evaluation_rows(const evaluation_filter& filter) const;
  // Every run, oldest first, with its stack hash and evaluation count.
  std::vector<run_row> runs() const;
  std::optional<stack_record> get_stack(std::int64_t stack_id) const;
  std::optional<problem_record> get_problem(std::int64_t problem_id) const;
  std::optional<candidate_record> get_candidate(std::int64_t candidate_id) const;

  // Builds (schema v5): the first row of a (candidate, key) is kept; its id is returned either way.
  std::int64_t upsert_build(const build_row& build);
  std::optional<build_row> find_build(std::int64_t candidate_id, const std::string& build_key) const;

  // Baselines (schema v3). insert_baseline writes the row and its samples in one transaction; find_baseline
  // returns the newest row with that cache key (without samples); baselines() every row, measured rows of
  // `stack_id` (0: any) and imported ones, ordered by level, file name, mode, origin.
  std::int64_t insert_baseline(const baseline_record& baseline);
  std::optional<baseline_record> find_baseline(const std::string& cache_key) const;
  std::vector<baseline_record> baselines(std::int64_t stack_id = 0) const;
  // The problem with this level and file name (the newest one loaded), to attach imported rows to.
  std::optional<std::int64_t> find_problem(int level, const std::string& file_name) const;
  db_info info() const;

  // LLM adapters (schema v4, db/store_llm.cpp). insert_llm_exchange writes one exchange; find_llm_exchange
  // returns the newest exchange of `run_id` with this request hash and seq (only successful ones when
  // `ok_only`); llm_spent_usd sums the priced exchanges recorded by the run.
  std::int64_t insert_llm_exchange(const llm_exchange_record& exchange);
  std::optional<llm_exchange_record> find_llm_exchange(std::int64_t run_id, const std::string& request_hash,
                                                       int seq, bool ok_only) const;
  double llm_spent_usd(std::int64_t run_id) const;
  // One origin per (candidate, run); writing it again replaces it.
  void upsert_candidate_origin(const candidate_origin_record& origin);
  std::optional<candidate_origin_record> get_candidate_origin(std::int64_t candidate_id,
                                                              std::int64_t run_id) const;
  // The settings a run generated with; writing them again replaces them.
  void upsert_llm_generation(const llm_generation_record& generation);
  std::optional<llm_generation_record> get_llm_generation(std::int64_t run_id) const;
  // Provider batches (kj generate --batch): insert returns the row id; update sets status and finished_at.
  std::int64_t insert_llm_batch(const llm_batch_record& batch);
  void update_llm_batch(std::int64_t id, const std::string& status, bool finished);
  std::vector<llm_batch_record> llm_batches(std::int64_t run_id) const;
  // Per provider and model, the exchanges the run used and what they solved, ordered by provider, model.
  std::vector<llm_cost_row> llm_costs(const std::string& run_uid) const;

  // The built-in agent (schema v7, db/store_agent.cpp). insert_trajectory writes a new row (its id is
  // returned), update_trajectory rewrites every field of the row with `t.id` but run, problem and attempt;
  // insert_turn writes a turn with its tool calls in one transaction. finished_trajectory finds a trajectory
  // of (run, problem, attempt) that ended (not running or interrupted): a resumed run skips those.
  std::int64_t insert_trajectory(const trajectory_record& t);
  void update_trajectory(const trajectory_record& t);
  std::int64_t insert_turn(const turn_record& turn, const std::vector<tool_call_record>& calls);
  std::optional<std::int64_t> finished_trajectory(std::int64_t run_id, std::int64_t problem_id,
                                                  int attempt) const;
  std::optional<trajectory_record> get_trajectory(std::int64_t id) const;
  // A trajectory with its turns (by turn) and their tool calls (by seq).
  std::optional<trajectory_transcript> get_transcript(std::int64_t id) const;
  // The trajectories of a run, by problem, attempt and id.
  std::vector<trajectory_record> trajectories(const std::string& run_uid) const;
  // The tool call that made an evaluation in a trajectory's loop, if one did.
  std::optional<tool_call_record> tool_call_of_evaluation(std::int64_t evaluation_id) const;
  // The trajectory whose re-measurement (its reported result) an evaluation is, if one is.
  std::optional<std::int64_t> trajectory_of_result(std::int64_t evaluation_id) const;

  // The problem audit (schema v10, db/store_audits.cpp): insert one problem's audit; the newest audit of each
  // problem per device (any stack), by problem id.
  std::int64_t insert_problem_audit(const problem_audit_record& audit);
  std::vector<problem_audit_record> latest_problem_audits() const;

private:
  struct impl;
  explicit store(std::unique_ptr<impl> impl);
  std::unique_ptr<impl> m_impl;
};

} // namespace kj::db
