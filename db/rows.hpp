// Plain rows that the store reads back for reports: evaluations with their timings, raw samples and linked
// baselines, exactly as stored. Everything derived from them (speedups, best baseline, shares, intervals) is
// computed in reports/metrics.hpp, not here.
#pragma once

#include "core/precision.hpp"
#include "core/verdict.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kj::db {

// What an evaluation held (schema v8) [bytes]; unset values were not measured (the device ones on the CPU).
struct memory_record {
  std::optional<std::int64_t> device_peak_bytes;   // the device's used memory, sampled (every process)
  std::optional<std::int64_t> judge_device_bytes;  // the judge's torch peak plus its largest arena
  std::optional<std::int64_t> runner_device_bytes; // the runner's torch peak (its own report)
  std::optional<std::int64_t> judge_rss_bytes;     // peak resident host memory of the judge
  std::optional<std::int64_t> runner_rss_bytes;    // of the runner and its descendants (the watchdog's)
  std::optional<std::int64_t> budget_bytes;        // the memory model's per-case budget
};

// One `timings` row with its raw samples (in measurement order).
struct timing_row {
  std::int64_t id = 0; // timings.id
  std::string subject; // candidate, reference_eager, empty_forward, ...
  std::string method;
  std::string clock;
  std::string params_json;
  std::optional<double> median_ms, mean_ms, min_ms, max_ms, stdev_ms; // [ms], NULL as nullopt
  std::vector<double> samples_ms;                                     // [ms]; empty unless asked for
};

// One cached baseline an evaluation names (`evaluation_baselines` → `baselines`), whatever its status.
struct linked_baseline_row {
  std::int64_t id = 0; // baselines.id
  std::string mode;
  std::string origin; // measured, imported
  std::string status;
  std::string method;
  std::string clock;
  std::string params_json;
  std::string hardware;
  kj::precision precision = kj::precision::fp32;
  std::int64_t stack_id = 0; // 0: none (imported)
  std::optional<double> median_ms, mean_ms, min_ms, max_ms, stdev_ms;
  std::vector<double> samples_ms; // baseline_samples; empty for imported rows or unless asked for
};

// One evaluation joined with its run, problem, candidate and stack, plus its timings and linked baselines.
struct evaluation_row {
  std::int64_t evaluation_id = 0;
  std::int64_t run_id = 0;
  std::string run_uid;
  std::string run_created_at;
  // The run's precision: its config_json.precision; for runs that predate it, the suffix of the protocol's
  // name (kernelbench-main-bf16), else fp32.
  kj::precision precision = kj::precision::fp32;
  std::int64_t problem_id = 0;
  std::string suite;
  std::string kb_version;
  int level = 0;
  int number = 0;
  std::string problem_name;
  std::string problem_file;
  std::string problem_hash;
  std::string overrides_json; // the --set sizes applied, e.g. {"dim":64}; "" when none
  std::int64_t candidate_id = 0;
  std::string candidate_path;
  std::string producer;
  int sample = 0;
  std::string candidate_hash;
  std::int64_t stack_id = 0;
  std::string stack_hash;
  std::string device;
  std::string protocol;
  kj::verdict verdict = kj::verdict::harness_error;
  std::string error;
  kj::strict_verdict strict_verdict = kj::strict_verdict::none;
  std::string strict_failed;
  std::string degenerate;
  std::string reason;                  // schema v8: of the verdict (out_of_memory, tolerance, ...)
  std::optional<memory_record> memory; // schema v8
  std::string phases_json;             // schema v8: {"phase": seconds, ...}; "" when none were recorded
  std::string finished_at;
  std::optional<double> duration_s;
  std::vector<std::string> finding_kinds;     // distinct, sorted
  std::vector<timing_row> timings;            // by id
  std::vector<linked_baseline_row> baselines; // by id
  // Schema v4: the tokens (four buckets) and cost of the LLM exchange that generated the candidate in this
  // run; none when no LLM adapter produced it (cost none also when the model has no price).
  std::optional<std::int64_t> input_tokens, cache_read_tokens, cache_write_tokens, output_tokens;
  std::optional<std::int64_t> reasoning_tokens; // of output_tokens, where the provider counts them
  std::optional<double> cost_usd;
};

// Which evaluations `store::evaluation_rows` returns; empty fields match everything.
struct evaluation_filter {
  std::string run_uid;
  std::string producer;
  std::string stack_hash; // a prefix of stacks.stack_hash
  std::optional<int> level;
  std::optional<int> number;
  std::string problem; // problems.file_name or problems.name
  bool samples = true; // read the raw samples of timings and baselines
};

// A run with the stack it measured on and how many evaluations it holds.
struct run_row {
  std::int64_t id = 0;
  std::string run_uid;
  std::string created_at;
  std::string status;
  std::string device;
  std::string command_line;
  std::string kj_version;
  std::string config_json;
  std::int64_t stack_id = 0;
  std::string stack_hash;
  std::int64_t evaluations = 0;
  std::string producer;                         // schema v9
  std::string detail;                           // schema v9
  std::map<std::string, std::int64_t> verdicts; // verdict -> result evaluations
};

} // namespace kj::db
