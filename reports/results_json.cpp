// The results' JSON form (kj results --format json): one object per evaluation, every field of the row.
#include "reports/results_table.hpp"

#include <nlohmann/json.hpp>

namespace kj::reports {
namespace {

using nlohmann::json;

json memory_json(const result_row& r) {
  if (!r.memory) return json();
  const auto value = [](const std::optional<std::int64_t>& v) { return v ? json(*v) : json(); };
  const db::memory_record& m = *r.memory;
  return {{"device_peak_bytes", value(m.device_peak_bytes)},
          {"judge_device_bytes", value(m.judge_device_bytes)},
          {"runner_device_bytes", value(m.runner_device_bytes)},
          {"judge_rss_bytes", value(m.judge_rss_bytes)},
          {"runner_rss_bytes", value(m.runner_rss_bytes)},
          {"budget_bytes", value(m.budget_bytes)}};
}

json optional_json(const std::optional<double>& v) {
  return v ? json(*v) : json();
}

json optional_count(const std::optional<std::int64_t>& v) {
  return v ? json(*v) : json();
}

json interval_json(const stats::interval& i) {
  return i.valid() ? json::array({i.low, i.high}) : json();
}

// One timing's provenance and precision: its DB row, statistic, sample count and interval.
json measured_json(const measured& m) {
  return {{"table", m.table},
          {"row_id", m.row_id},
          {"method", m.method},
          {"clock", m.clock},
          {"origin", m.origin},
          {"statistic", stats::statistic_name(m.statistic)},
          {"ms", m.ms},
          {"samples", m.samples_ms.size()},
          {"ci_ms", interval_json(m.ci_ms)},
          {"ci_coverage", m.ci_coverage}};
}

// The speedup over the eager baseline at the numerics the candidate computed at (null when none).
json matched_json(const result_row& r) {
  if (!r.matched) return json();
  return {{"baseline", r.matched->mode},
          {"baseline_ms", r.matched->baseline.ms},
          {"baseline_row", r.matched->baseline.row_id},
          {"speedup", r.matched->speedup},
          {"ci", interval_json(r.matched->ci)}};
}

} // namespace

json result_json(const result_row& r) {
  json baselines = json::object(), speedups = json::object(), speedups_ci = json::object();
  json timings = json::object();
  for (const auto& b : r.baselines) {
    baselines[b.mode] = b.baseline.ms;
    speedups[b.mode] = b.speedup;
    speedups_ci[b.mode] = interval_json(b.ci);
    if (b.mode != "eager") timings[b.mode] = measured_json(b.baseline);
  }
  if (r.candidate) timings["candidate"] = measured_json(*r.candidate);
  if (r.reference) timings["reference_eager"] = measured_json(*r.reference);
  const auto count = [](const std::optional<measured>& m) { return m ? json(m->samples_ms.size()) : json(); };
  const auto ci = [](const std::optional<measured>& m) { return m ? interval_json(m->ci_ms) : json(); };
  return {{"format_version", results_format_version},
          {"evaluation_id", r.evaluation_id},
          {"run", r.run_uid},
          {"suite", r.suite},
          {"level", r.level},
          {"problem_id", r.number},
          {"problem", r.problem_name},
          {"candidate", candidate_text(r)},
          {"sizes", r.sizes.empty() ? json() : json::parse(r.sizes, nullptr, false)},
          {"producer", r.producer},
          {"sample", r.sample},
          {"device", r.device},
          {"verdict", name_of(r.verdict)},
          {"reason", r.reason},
          {"error", r.error},
          {"candidate_median_ms", optional_json(r.candidate_median_ms)},
          {"reference_median_ms", optional_json(r.reference_median_ms)},
          {"speedup", optional_json(r.speedup)},
          {"speedup_noisy", may_be_noise(r)},
          {"speedup_noise", r.noise},
          {"speedup_host_bound", host_bound(r)},
          {"strict_verdict", name_of(r.strict_verdict)},
          {"strict_failed", r.strict_failed},
          {"findings", r.findings},
          {"degenerate", r.degenerate},
          {"library_share", optional_json(r.library_share)},
          {"gpu_busy_share", optional_json(r.gpu_busy_share)},
          {"baseline_ms", baselines},
          {"speedups", speedups},
          {"best_baseline", r.best_baseline},
          {"speedup_best", optional_json(r.speedup_best)},
          {"candidate_samples", count(r.candidate)},
          {"candidate_ci_ms", ci(r.candidate)},
          {"reference_samples", count(r.reference)},
          {"reference_ci_ms", ci(r.reference)},
          {"speedup_ci", interval_json(r.speedup_ci)},
          {"speedups_ci", speedups_ci},
          {"speedup_best_ci", interval_json(r.speedup_best_ci)},
          {"timings", timings},
          {"stack", r.stack_hash},
          {"protocol", r.protocol},
          {"dtype", kj::name_of(r.dtype)},
          {"untrusted", r.untrusted},
          {"numerics", r.numerics ? json(kj::name_of(*r.numerics)) : json()},
          {"speedup_matched", matched_json(r)},
          {"unsound_problem", r.unsound_problem},
          {"problem_verified", r.verified},
          {"problem_verified_why", r.verified_why},
          {"input_tokens", optional_count(r.input_tokens)},
          {"cache_read_tokens", optional_count(r.cache_read_tokens)},
          {"cache_write_tokens", optional_count(r.cache_write_tokens)},
          {"output_tokens", optional_count(r.output_tokens)},
          {"reasoning_tokens", optional_count(r.reasoning_tokens)},
          {"cost_usd", optional_json(r.cost_usd)},
          {"memory", memory_json(r)},
          {"phases", r.phases_json.empty() ? json() : json::parse(r.phases_json)}};
}

} // namespace kj::reports
