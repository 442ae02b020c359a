// Derived metrics of one evaluation, computed from the rows the DB stores: which timings pair up, speedups
// against each baseline and the best one, their bootstrap intervals, library and GPU-busy shares. The one
// place `kj results`, `kj report`, `kj compare` and `kj history` take these numbers from.
#pragma once

#include "core/precision.hpp"
#include "core/verdict.hpp"
#include "db/rows.hpp"
#include "db/store.hpp"
#include "reports/stats.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::reports {

// A headline timing with its provenance: the DB row, how it was measured, its samples and interval.
struct measured {
  std::string table;       // "timings" or "baselines"
  std::int64_t row_id = 0; // timings.id or baselines.id
  std::string name;        // the subject (candidate, reference_eager) or the baseline's mode
  std::string method;
  std::string clock;
  std::string origin = "measured"; // baselines: measured or imported
  stats::statistic statistic = stats::statistic::median;
  double ms = 0;                  // [ms] the headline as stored (median_ms or mean_ms)
  std::vector<double> samples_ms; // [ms] the finite raw samples
  // [ms] interval of the headline: the distribution-free order-statistic interval of the median (its
  // coverage in ci_coverage), or a bootstrap interval of the mean; invalid without samples.
  stats::interval ci_ms;
  double ci_coverage = 0;
};

// The candidate's speedup against one baseline: baseline headline / candidate headline.
struct baseline_speedup {
  std::string mode; // "eager" (the run's paired reference) or a cached baseline's mode
  measured baseline;
  double speedup = 0;
  stats::interval ci; // bootstrap interval from both sides' raw samples; invalid when a side has none
};

struct metric_options {
  bool intervals = true; // bootstrap intervals of speedups (off: point values only)
  stats::bootstrap_options bootstrap;
};

// One evaluation with everything derived from it (`kj results` prints one per line).
struct result_row {
  std::int64_t evaluation_id = 0;
  std::string run_uid;
  std::string run_created_at;
  std::string suite;
  std::string kb_version;
  int level = 0;
  int number = 0;
  std::string problem_name;
  std::string problem_file;
  std::string problem_hash;
  std::string sizes; // the --set sizes it was judged at ({"dim":64}); "" at the problem's own
  std::int64_t candidate_id = 0;
  std::string candidate_path;
  std::string candidate_hash;
  std::string producer;
  int sample = 0;
  std::string device;
  std::string protocol;
  kj::precision dtype = kj::precision::fp32; // the run's precision
  std::int64_t stack_id = 0;
  std::string stack_hash;
  kj::verdict verdict = kj::verdict::harness_error; // read from the DB's name (row_verdicts)
  std::string error;
  kj::strict_verdict strict_verdict = kj::strict_verdict::none;
  std::string strict_failed;
  std::string findings; // kinds, comma-separated
  std::string degenerate;
  std::string reason; // of the verdict (out_of_memory, tolerance, ...)
  std::int64_t problem_id = 0;
  std::string unsound_problem; // why `kj audit` found the problem unsound on this device ('' when not)
  // The problem's standing in the verified set (kernelbench/verified): sound, weak, unsound, error, changed
  // or absent; '' when the set does not apply (not KernelBench main, or no set read).
  std::string verified;
  std::string verified_why;                // the set's reasons or notes for a problem it does not call sound
  std::optional<db::memory_record> memory; // what the evaluation held
  std::string phases_json;                 // {"phase": seconds}
  std::optional<double> duration_s;        // [s] wall time of the evaluation

  std::optional<measured> candidate; // the candidate's first timing
  std::optional<measured> reference; // its eager reference, same method and clock preferred
  // [ms] the two headlines (kept under their historical names; the mean for kernelbench/cuda-agent methods)
  std::optional<double> candidate_median_ms;
  std::optional<double> reference_median_ms;
  std::optional<double> speedup; // vs the paired eager reference, when measured the same way
  stats::interval speedup_ci;
  // Every baseline measured the candidate's way: eager (paired) first, then linked cached ones by mode.
  std::vector<baseline_speedup> baselines;
  std::string best_baseline; // the fastest baseline's mode
  std::optional<double> speedup_best;
  stats::interval speedup_best_ci;
  std::optional<double> library_share;  // GPU: share of the candidate's kernel time in library kernels
  std::optional<double> gpu_busy_share; // GPU: trace busy time per call over the candidate's headline
  // Why the candidate's time is not trusted (its kernel trace saw work the timer missed): no speedup is
  // derived.
  std::string untrusted;
  // The numerics the candidate computed at when narrower than the run's (tf32, bf16, fp16: the judge's
  // record), and its speedup over the eager baseline cached at those numerics (`kj baselines --precision`),
  // shown beside the run's (CUDA-Agent issue #16); never counted in the run's speedups.
  std::optional<kj::precision> numerics;
  std::optional<baseline_speedup> matched;
  // Why the speedup may be noise ("" when not): its interval includes 1, or the host's speed moved by more
  // than k_host_moved while it was timed, or kj's input draw was charged to its calls (slower in the
  // candidate's process than in the judge). Printed as a mark beside the speedup.
  std::string noise;
  // The generating LLM call's tokens (four buckets) and cost, when an LLM adapter produced the candidate.
  std::optional<std::int64_t> input_tokens, cache_read_tokens, cache_write_tokens, output_tokens;
  std::optional<std::int64_t> reasoning_tokens; // of output_tokens
  std::optional<double> cost_usd;

  // The speedup against a mode, or against the best baseline for "best".
  std::optional<double> speedup_vs(const std::string& mode) const;
  stats::interval speedup_ci_vs(const std::string& mode) const;
  const baseline_speedup* baseline(const std::string& mode) const;
  // Compatible verdict correct and the strict verdict not failed: what rates and geomeans count.
  bool counted_correct() const;
  // Whether the candidate was judged: not when kj itself failed on the job (harness_error) or the problem's
  // reference did (problem_error). Such a row counts neither for nor against the candidate.
  bool judged() const;
  std::string problem_key() const; // suite/kb_version/level/file name
  std::string key() const;         // problem_key()/producer/sample, to match rows across runs
  // problem_key() and the sizes: rows judged at other --set sizes are other measurements (kj compare,
  // kj history never pair them).
  std::string sized_problem_key() const;
};

result_row derive(const db::evaluation_row& row, const metric_options& options = {});

// The candidate as exports name it: its file, or "(producer)" for one with no file (builtin:identity, an
// agent's), as `kj run --collect-only` writes it.
inline std::string candidate_text(const result_row& r) {
  return r.candidate_path.empty() ? "(" + r.producer + ")" : r.candidate_path;
}

// A host-speed change (the host probe, across the candidate's and the reference's rounds) above which a
// speedup is marked as noise; above 10% it is not credited at all (engine/worker/judge_timing.cpp).
inline constexpr double k_host_moved = 0.05;

// result_row::noise of a row whose speedups are derived, from its candidate timing's params.
std::string noise_of(const result_row& r, const nlohmann::json& params);

// How result_row::noise names a timing whose calls the judge's clock charged systematically (`clock_doubt`).
inline constexpr const char* k_clock_doubt = "most calls charged by the judge's clock";

// How result_row::noise names timing rounds whose speedups fall on both sides of 1 (samples within a round
// share the host's state of that moment: the pooled interval cannot see a drift between rounds; the rounds
// can). Followed by the round count and the per-round speedups' range.
inline constexpr const char* k_rounds_disagree = "its timing rounds disagree";

// The rounds_disagree note of a candidate timing and its reference (both with params.round_samples and their
// samples), or "" when their rounds agree or are not known.
std::string rounds_disagree(const db::timing_row& candidate, const db::timing_row& reference);

// Whether the row's timing conditions (not its interval) make any speedup of it possible noise: the host's
// speed moved, one timing round could not tell, the rounds disagree, or the judge's clock charged most calls
// (the `~` mark, and no noise-aware "faster").
inline bool timing_doubtful(const result_row& r) {
  return r.noise.find("host") != std::string::npos || r.noise.find("one timing round") != std::string::npos ||
         r.noise.find(k_clock_doubt) != std::string::npos ||
         r.noise.find(k_rounds_disagree) != std::string::npos;
}

// Whether a speedup with interval `ci` (the eager one by default) may be noise: the `~` mark of every table,
// the report and `speedup_noisy` in JSON, all from this one rule. Charges on a few calls are named in
// result_row::noise (the speedup counts them) without making the speedup noise.
inline bool may_be_noise(const result_row& r, const stats::interval& ci) {
  return timing_doubtful(r) || (ci.valid() && !ci.excludes(1.0));
}
inline bool may_be_noise(const result_row& r) {
  return r.speedup && may_be_noise(r, r.speedup_ci);
}

// A host-bound speedup (the `h` mark, `speedup_host_bound` in JSON): the candidate's kernels kept the GPU
// busy for less than this share of its timed window (gpu_busy_share), so the window is mostly the host
// launching work and the speedup compares the host's speed in two processes as much as two forwards. Identity
// candidates on KernelBench main level 3 (H100, 2026-12-06): all 15 problems under 0.6 missed 1.0 by 1.5-25%
// and moved from run to run (0.65x to 1.41x for one model, whatever CPU both were timed on); the 24 over 0.85
// were within 2.5%, 21 of them within 1% (docs/methodology.md). Not noise in the `~` sense: a real speedup
// may be one.
inline constexpr double k_host_bound_share = 0.75;
inline bool host_bound(const result_row& r) {
  return r.speedup && r.gpu_busy_share && *r.gpu_busy_share < k_host_bound_share;
}

// Marks the rows whose problem the newest `kj audit` of its device found unsound
// (result_row::unsound_problem).
void mark_unsound_problems(const db::store& store, std::vector<result_row>& rows);

// `kj results`: the evaluations of one run, derived.
// The newest evaluation of each (producer, problem, sample): a rerun, or a resume that judged an edited file
// again, replaces the older one; it does not double count (kj report, kj export).
std::vector<result_row> newest_per_key(std::vector<result_row> rows);

std::vector<result_row> results(const db::store& store, const std::string& run_uid,
                                const metric_options& options = {});

// "computed at tf32: 1.23x over eager at tf32" (or "...: no eager baseline at tf32 cached", or "computed at
// tf32" when its time is not trusted for another reason); "" when it computed at the run's numerics.
std::string numerics_text(const result_row& r);

} // namespace kj::reports
