// `kj compare`: two sets of evaluations (two runs, producers or stacks) problem by problem, with bootstrap
// intervals of time ratios from the raw samples, Mann–Whitney tests adjusted by Benjamini–Hochberg, a minimum
// effect, and a class per problem; and the calibration that measures its false-alarm and detection rates.
// docs/reports.md gives the rules and the reasons for them.
#pragma once

#include "reports/metrics.hpp"

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kj::reports {

struct compare_options {
  double min_effect = 0.03;     // a change smaller than 3% is never called
  double alpha = 0.05;          // Benjamini–Hochberg false discovery rate
  double min_busy_share = 0.9;  // GPU: below it a forward is host-bound and its time follows the host
  std::size_t min_samples = 10; // fewer raw samples on a side: no call (a bootstrap of a few is unreliable)
  // Samples spread wider than this (interquartile range over median) on a side: no call. A loaded host
  // makes samples multimodal (multiples of the scheduler's time slice), and their median jumps between modes.
  double max_spread = 0.10;
  stats::bootstrap_options bootstrap;
};

enum class change_class {
  improved,  // faster beyond the minimum effect, significant, interval below 1
  regressed, // slower beyond the minimum effect, significant, interval above 1
  unchanged, // the ratio's interval lies within the minimum effect either way
  too_noisy, // neither: the data cannot tell a change of the minimum effect from none
  broken,    // counted correct in BASE, not in HEAD
  fixed,     // counted correct in HEAD, not in BASE
  not_timed, // no timing on a side (both failing, or not measured)
};
const char* change_name(change_class c);

struct comparison_row {
  std::string key; // the problem (and producer, sample) both sides were matched on
  int level = 0;
  int number = 0;
  std::string problem;
  int sample = 0;
  std::string base_producer, head_producer;
  std::int64_t base_evaluation = 0, head_evaluation = 0;
  std::int64_t base_timing = 0, head_timing = 0; // timings.id of each side's candidate timing
  std::string base_stack, head_stack;
  std::string base_verdict, head_verdict; // "correct", "strict fail", or the compatible verdict
  stats::statistic statistic = stats::statistic::median;
  std::optional<double> base_ms, head_ms;
  std::size_t base_n = 0, head_n = 0;
  std::optional<double> ratio; // head / base time: above 1 is slower
  stats::interval ci;
  double p = std::numeric_limits<double>::quiet_NaN(); // Mann–Whitney, two-sided
  double q = std::numeric_limits<double>::quiet_NaN(); // Benjamini–Hochberg adjusted
  std::optional<double> control_ratio; // the paired eager reference's head / base (same stack and problem)
  stats::interval adjusted_ci;         // of ratio / control_ratio, from the four sets of raw samples
  std::optional<double> busy_share;    // the lower GPU-busy share of the two sides
  double spread = 0;                   // the larger interquartile range over median of the two sides
  change_class verdict = change_class::not_timed;
  std::string reason;
};

// What one side of a comparison is: where its rows came from (for the report's provenance).
struct compare_side {
  std::string selector; // as given, e.g. "run=r1" or "producer=claude,stack=ab12"
  std::string db;
  std::vector<std::string> runs, stacks, producers;
  std::size_t evaluations = 0;
};

// Reads the rows a selector names: comma-separated KEY=VALUE terms, keys run (a run id or "latest"),
// producer and stack (a stack-hash prefix); a bare word is a run id. Throws std::invalid_argument naming the
// selector when a term is malformed, a run is unknown, or nothing matches.
std::vector<result_row> select_rows(const db::store& store, const std::string& selector,
                                    const metric_options& options, compare_side& side);

struct comparison {
  compare_options options;
  compare_side base, head;
  std::vector<comparison_row> rows;
  std::vector<std::string> only_base, only_head; // keys without a partner
  std::map<change_class, std::size_t> counts;
  std::size_t timed = 0; // rows with a ratio
  std::optional<double> geomean_ratio;
  stats::interval geomean_ci; // bootstrap over problems
  bool failed() const;        // anything regressed or broken: `kj compare` exits 1
  // "regression", "no regression", or "nothing compared" (no problem in common: `kj compare` exits 2)
  const char* outcome() const;
};

// Matches rows by problem and sample (and producer, unless each side holds exactly one producer); where a
// side has several evaluations of one key, the newest counts.
comparison compare(const std::vector<result_row>& base, const std::vector<result_row>& head,
                   const compare_options& options);

struct calibration_options {
  std::vector<double> slowdowns = {0.05}; // multiplicative, injected into HEAD's candidate samples
  int rounds = 5; // round k injects into the matched timed problems with index % rounds == k
  double target_false_alarm = 0.01;
  double target_detection = 0.90;
};

struct injection_result {
  double slowdown = 0;
  std::size_t injected = 0, detected = 0;
  std::size_t other_regressed = 0; // non-injected problems called regressed in the same rounds
  std::size_t gpu_bound_injected = 0, gpu_bound_detected = 0; // busy share known and >= the minimum
  std::map<change_class, std::size_t> missed;                 // the classes the undetected ones got
  double detection_rate() const;
};

struct calibration {
  comparison aa;            // BASE against HEAD as they are: every call is a false alarm
  std::size_t eligible = 0; // matched, correct and timed on both sides
  std::size_t false_regressions = 0, false_improvements = 0;
  std::vector<injection_result> injections;
  calibration_options options;
  double false_alarm_rate() const; // false regressions / eligible
  bool passed() const;
};

// Writers: a table for people, Markdown for CI comments, JSON for scripts, a self-contained HTML page.
std::string compare_text(const comparison& c);
std::string compare_markdown(const comparison& c);
nlohmann::json compare_json(const comparison& c);
std::string compare_html(const comparison& c);
std::string calibration_text(const calibration& c);
nlohmann::json calibration_json(const calibration& c);

// BASE and HEAD must be two runs of unchanged kernels (an A/A pair).
calibration calibrate(const std::vector<result_row>& base, const std::vector<result_row>& head,
                      const compare_options& options, const calibration_options& calibration_opts);

} // namespace kj::reports
