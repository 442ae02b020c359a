// Implements the derived metrics of an evaluation (see metrics.hpp; docs/reports.md defines each).
#include "reports/metrics.hpp"

#include "core/verdict.hpp"
#include "timing/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

namespace kj::reports {

namespace {

using nlohmann::json;

json parse_or_empty(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json::object();
  }
}

// "mean" when the row says its headline is the mean (methods kernelbench, cuda-agent; imported baselines).
stats::statistic headline_of(const std::string& params_json) {
  const json params = parse_or_empty(params_json);
  return params.is_object() && params.value("headline", std::string()) == "mean" ? stats::statistic::mean
                                                                                 : stats::statistic::median;
}

std::vector<double> finite(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values)
    if (std::isfinite(v)) out.push_back(v);
  return out;
}

// The headline's interval: order statistics for the median (kj::timing's, as the stopping rule uses),
// a bootstrap for the mean.
void add_interval(measured& m, const metric_options& options, const std::string& seed_key) {
  if (m.samples_ms.empty()) return;
  if (m.statistic == stats::statistic::median) {
    const timing::summary s = timing::summarize(m.samples_ms, options.bootstrap.confidence);
    m.ci_ms = {s.ci_low, s.ci_high};
    m.ci_coverage = s.ci_coverage;
    return;
  }
  if (!options.intervals) return;
  stats::bootstrap_options b = options.bootstrap;
  b.seed = stats::seed_for(seed_key, options.bootstrap.seed);
  m.ci_ms = stats::bootstrap_statistic(m.samples_ms, m.statistic, b);
  m.ci_coverage = options.bootstrap.confidence;
}

std::optional<measured> from_timing(const db::timing_row& t, const metric_options& options) {
  measured m;
  m.table = "timings";
  m.row_id = t.id;
  m.name = t.subject;
  m.method = t.method;
  m.clock = t.clock;
  m.statistic = headline_of(t.params_json);
  const auto& headline = m.statistic == stats::statistic::mean ? t.mean_ms : t.median_ms;
  if (!headline || !std::isfinite(*headline)) return std::nullopt;
  m.ms = *headline;
  m.samples_ms = finite(t.samples_ms);
  add_interval(m, options, fmt::format("timing/{}", t.id));
  return m;
}

std::optional<measured> from_baseline(const db::linked_baseline_row& b, const metric_options& options) {
  measured m;
  m.table = "baselines";
  m.row_id = b.id;
  m.name = b.mode;
  m.method = b.method;
  m.clock = b.clock;
  m.origin = b.origin;
  m.statistic = b.origin == "imported" ? stats::statistic::mean : headline_of(b.params_json);
  const auto& headline = m.statistic == stats::statistic::mean ? b.mean_ms : b.median_ms;
  if (!headline || !std::isfinite(*headline)) return std::nullopt;
  m.ms = *headline;
  m.samples_ms = finite(b.samples_ms);
  add_interval(m, options, fmt::format("baseline/{}", b.id));
  return m;
}

const db::timing_row* pick_candidate(const db::evaluation_row& e) {
  for (const auto& t : e.timings)
    if (t.subject == "candidate") return &t;
  return nullptr;
}

// The first eager reference, preferring one measured with the candidate's method and clock.
const db::timing_row* pick_reference(const db::evaluation_row& e, const db::timing_row* candidate) {
  const db::timing_row* first = nullptr;
  for (const auto& t : e.timings) {
    if (t.subject != "reference_eager") continue;
    if (candidate && t.method == candidate->method && t.clock == candidate->clock) return &t;
    if (!first) first = &t;
  }
  return first;
}

baseline_speedup speedup_against(const std::string& mode, const measured& baseline, const measured& candidate,
                                 std::int64_t evaluation_id, const metric_options& options) {
  baseline_speedup s{mode, baseline, baseline.ms / candidate.ms, {}};
  if (options.intervals) {
    stats::bootstrap_options b = options.bootstrap;
    b.seed = stats::seed_for(fmt::format("speedup/{}/{}", evaluation_id, mode), options.bootstrap.seed);
    s.ci = stats::bootstrap_ratio(baseline.samples_ms, candidate.samples_ms, candidate.statistic, b);
  }
  return s;
}

void add_baselines(const db::evaluation_row& e, result_row& r, const metric_options& options) {
  const measured& candidate = *r.candidate;
  if (r.reference && r.speedup)
    r.baselines.push_back(speedup_against("eager", *r.reference, candidate, e.evaluation_id, options));
  std::vector<const db::linked_baseline_row*> linked;
  for (const auto& b : e.baselines)
    if (b.status == "ok" && b.mode != "eager" && b.method == candidate.method && b.clock == candidate.clock)
      linked.push_back(&b);
  std::stable_sort(linked.begin(), linked.end(), [](auto* x, auto* y) { return x->mode < y->mode; });
  for (const auto* b : linked)
    if (auto m = from_baseline(*b, options))
      r.baselines.push_back(speedup_against(b->mode, *m, candidate, e.evaluation_id, options));
  const baseline_speedup* best = nullptr;
  for (const auto& b : r.baselines)
    if (!best || b.baseline.ms < best->baseline.ms) best = &b;
  if (best) {
    r.best_baseline = best->mode;
    r.speedup_best = best->speedup;
    r.speedup_best_ci = best->ci;
  }
}

// The candidate's speedup over the eager baseline linked at the numerics it computed at (tf32, bf16, fp16),
// measured its way; none when it computed at the run's numerics or no such baseline is cached.
void add_matched(const db::evaluation_row& e, result_row& r, const metric_options& options) {
  if (!r.numerics || !r.candidate || r.candidate->ms <= 0) return;
  for (const auto& b : e.baselines)
    if (b.status == "ok" && b.mode == "eager" && b.precision == *r.numerics &&
        b.method == r.candidate->method && b.clock == r.candidate->clock)
      if (auto m = from_baseline(b, options)) {
        r.matched =
            speedup_against("eager-" + kj::name_of(*r.numerics), *m, *r.candidate, e.evaluation_id, options);
        return;
      }
}

// Whether the only reason a candidate's time is not trusted is the numerics flags it changed: its time is
// then a true time at its own numerics, comparable with a baseline at them.
bool untrusted_for_numerics(const nlohmann::json& params) {
  return params.contains("flags_changed") && params.value("untrusted_reason", std::string())
                                                 .starts_with("the candidate changed torch's numerics");
}

void add_trace_shares(const db::timing_row& candidate, result_row& r) {
  const json params = parse_or_empty(candidate.params_json);
  const json* trace = params.is_object() && params.contains("trace") ? &params["trace"] : nullptr;
  if (!trace || !trace->is_object()) return;
  if (auto it = trace->find("library_share"); it != trace->end() && it->is_number())
    r.library_share = it->get<double>();
  if (auto it = trace->find("busy_ms_per_call");
      it != trace->end() && it->is_number() && r.candidate_median_ms)
    r.gpu_busy_share = it->get<double>() / *r.candidate_median_ms;
}

void copy_identity(const db::evaluation_row& e, result_row& r) {
  r.evaluation_id = e.evaluation_id;
  r.problem_id = e.problem_id;
  r.run_uid = e.run_uid;
  r.run_created_at = e.run_created_at;
  r.suite = e.suite;
  r.kb_version = e.kb_version;
  r.level = e.level;
  r.number = e.number;
  r.problem_name = e.problem_name;
  r.problem_file = e.problem_file;
  r.problem_hash = e.problem_hash;
  r.sizes = e.overrides_json;
  r.candidate_id = e.candidate_id;
  r.candidate_path = e.candidate_path;
  r.candidate_hash = e.candidate_hash;
  r.producer = e.producer;
  r.sample = e.sample;
  r.device = e.device;
  r.protocol = e.protocol;
  r.dtype = e.precision;
  r.stack_id = e.stack_id;
  r.stack_hash = e.stack_hash;
  r.verdict = e.verdict;
  r.error = e.error;
  r.strict_verdict = e.strict_verdict;
  r.strict_failed = e.strict_failed;
  r.degenerate = e.degenerate;
  r.reason = e.reason;
  r.memory = e.memory;
  r.phases_json = e.phases_json;
  r.duration_s = e.duration_s;
  for (const auto& kind : e.finding_kinds)
    r.findings += (r.findings.empty() ? "" : ",") + kind;
  r.input_tokens = e.input_tokens;
  r.cache_read_tokens = e.cache_read_tokens;
  r.cache_write_tokens = e.cache_write_tokens;
  r.output_tokens = e.output_tokens;
  r.reasoning_tokens = e.reasoning_tokens;
  r.cost_usd = e.cost_usd;
}

} // namespace

std::string numerics_text(const result_row& r) {
  if (!r.numerics) return "";
  const std::string at = kj::name_of(*r.numerics);
  if (!r.matched && !r.untrusted.empty()) return "computed at " + at; // no time to compare
  if (!r.matched) return fmt::format("computed at {}: no eager baseline at {} cached", at, at);
  return fmt::format("computed at {}: {:.2f}x over eager at {}", at, r.matched->speedup, at);
}

result_row derive(const db::evaluation_row& e, const metric_options& options) {
  result_row r;
  copy_identity(e, r);
  const db::timing_row* candidate = pick_candidate(e);
  const db::timing_row* reference = pick_reference(e, candidate);
  if (candidate) r.candidate = from_timing(*candidate, options);
  if (reference) r.reference = from_timing(*reference, options);
  if (r.candidate) r.candidate_median_ms = r.candidate->ms;
  if (r.reference) r.reference_median_ms = r.reference->ms;
  if (candidate) {
    const auto params = nlohmann::json::parse(candidate->params_json, nullptr, false);
    // the judge recorded the numerics the candidate computed at, when narrower than the run's
    if (params.is_object()) r.numerics = kj::parse_precision(params.value("numerics", std::string()));
    if (r.numerics == r.dtype) r.numerics.reset();
    if (params.is_object() && !params.value("trusted", true)) {
      r.untrusted = params.value("untrusted_reason", std::string("the timer missed work the trace saw"));
      if (untrusted_for_numerics(params)) add_matched(e, r, options);
      return r; // a time that cannot be trusted yields no speedup at the run's numerics
    }
  }
  const bool comparable = r.candidate && r.reference && r.candidate->method == r.reference->method &&
                          r.candidate->clock == r.reference->clock && r.candidate->ms > 0;
  if (comparable) r.speedup = r.reference->ms / r.candidate->ms;
  if (r.candidate && r.candidate->ms > 0) add_baselines(e, r, options);
  add_matched(e, r, options);
  if (const auto* eager = r.baseline("eager")) r.speedup_ci = eager->ci;
  if (candidate) add_trace_shares(*candidate, r);
  if (candidate) r.noise = noise_of(r, nlohmann::json::parse(candidate->params_json, nullptr, false));
  if (r.speedup && candidate && reference)
    if (const std::string rounds = rounds_disagree(*candidate, *reference); !rounds.empty())
      r.noise += (r.noise.empty() ? "" : "; ") + rounds;
  return r;
}

void mark_unsound_problems(const db::store& store, std::vector<result_row>& rows) {
  std::map<std::pair<std::int64_t, std::string>, std::string> unsound;
  for (const auto& a : store.latest_problem_audits())
    if (a.unsound) unsound[{a.problem_id, a.device}] = a.reasons;
  if (unsound.empty()) return;
  for (auto& r : rows)
    if (const auto it = unsound.find({r.problem_id, r.device}); it != unsound.end())
      r.unsound_problem = it->second;
}

std::vector<result_row> results(const db::store& store, const std::string& run_uid,
                                const metric_options& options) {
  db::evaluation_filter filter;
  filter.run_uid = run_uid;
  filter.samples = true;
  std::vector<result_row> out;
  for (const auto& row : store.evaluation_rows(filter))
    out.push_back(derive(row, options));
  mark_unsound_problems(store, out);
  return out;
}

const baseline_speedup* result_row::baseline(const std::string& mode) const {
  for (const auto& b : baselines)
    if (b.mode == mode) return &b;
  return nullptr;
}

std::optional<double> result_row::speedup_vs(const std::string& mode) const {
  if (mode == "best") return speedup_best;
  const auto* b = baseline(mode);
  return b ? std::optional<double>(b->speedup) : std::nullopt;
}

stats::interval result_row::speedup_ci_vs(const std::string& mode) const {
  if (mode == "best") return speedup_best_ci;
  const auto* b = baseline(mode);
  return b ? b->ci : stats::interval{};
}

bool result_row::counted_correct() const {
  return kj::counted_correct(verdict, strict_verdict);
}

bool result_row::judged() const {
  return verdict != kj::verdict::harness_error && verdict != kj::verdict::problem_error;
}

std::string result_row::problem_key() const {
  return fmt::format("{}/{}/{}/{}", suite, kb_version, level, problem_file);
}

std::string result_row::sized_problem_key() const {
  return sizes.empty() ? problem_key() : problem_key() + " at " + sizes;
}

std::string result_row::key() const {
  return fmt::format("{}/{}/{}", problem_key(), producer, sample);
}

// The newest evaluation of each (producer, problem, sample): a rerun replaces, it does not double count.
std::vector<result_row> newest_per_key(std::vector<result_row> rows) {
  std::map<std::string, std::size_t> newest;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto [it, inserted] = newest.emplace(rows[i].key(), i);
    const result_row& held = rows[it->second];
    if (!inserted &&
        (rows[i].run_created_at > held.run_created_at ||
         (rows[i].run_created_at == held.run_created_at && rows[i].evaluation_id > held.evaluation_id)))
      it->second = i;
  }
  std::set<std::size_t> keep;
  for (const auto& [key, index] : newest)
    keep.insert(index);
  std::vector<result_row> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (keep.contains(i)) out.push_back(std::move(rows[i]));
  return out;
}

} // namespace kj::reports
