// Implements `kj compare`'s matching, per-problem statistics and classification (rules in docs/reports.md).
#include "reports/compare.hpp"

#include <cmath>
#include <fmt/format.h>
#include <set>

namespace kj::reports {

const char* change_name(change_class c) {
  switch (c) {
  case change_class::improved:
    return "improved";
  case change_class::regressed:
    return "regressed";
  case change_class::unchanged:
    return "unchanged";
  case change_class::too_noisy:
    return "too noisy";
  case change_class::broken:
    return "broken";
  case change_class::fixed:
    return "fixed";
  case change_class::not_timed:
    return "not timed";
  }
  return "?";
}

bool comparison::failed() const {
  const auto count = [&](change_class c) { return counts.contains(c) ? counts.at(c) : 0; };
  return count(change_class::regressed) + count(change_class::broken) > 0;
}

const char* comparison::outcome() const {
  return failed() ? "regression" : rows.empty() ? "nothing compared" : "no regression";
}

namespace {

std::string verdict_text(const result_row& r) {
  if (r.counted_correct()) return "correct";
  return r.verdict == kj::verdict::correct ? "strict fail" : name_of(r.verdict);
}

bool single_producer(const std::vector<result_row>& rows) {
  std::set<std::string> producers;
  for (const auto& r : rows)
    producers.insert(r.producer);
  return producers.size() <= 1;
}

// The newest row of each key (rows arrive oldest run first).
std::map<std::string, const result_row*> by_key(const std::vector<result_row>& rows, bool with_producer) {
  std::map<std::string, const result_row*> out;
  for (const auto& r : rows) {
    // Sizes are part of the match: a run at --set dim=64 is never compared with one at the problem's own.
    const std::string key = (with_producer ? r.key() : fmt::format("{}/{}", r.problem_key(), r.sample)) +
                            (r.sizes.empty() ? "" : " at " + r.sizes);
    auto& slot = out[key];
    if (!slot || r.run_created_at > slot->run_created_at ||
        (r.run_created_at == slot->run_created_at && r.evaluation_id > slot->evaluation_id))
      slot = &r;
  }
  return out;
}

double relative_iqr(const std::vector<double>& samples) {
  std::vector<double> sorted = samples;
  const double q1 = stats::percentile(sorted, 0.25), q3 = stats::percentile(sorted, 0.75);
  const double median = stats::percentile(sorted, 0.5);
  return median > 0 ? (q3 - q1) / median : 0;
}

// Ratio, interval and test of one matched pair whose candidates are both counted correct and timed.
void measure(const result_row& base, const result_row& head, const compare_options& options,
             comparison_row& row) {
  const measured& b = *base.candidate;
  const measured& h = *head.candidate;
  row.statistic = h.statistic;
  row.ratio = h.ms / b.ms;
  stats::bootstrap_options boot = options.bootstrap;
  boot.seed = stats::seed_for("compare/" + row.key, options.bootstrap.seed);
  row.ci = stats::bootstrap_ratio(h.samples_ms, b.samples_ms, h.statistic, boot);
  if (!b.samples_ms.empty() && !h.samples_ms.empty()) {
    row.p = stats::mann_whitney(h.samples_ms, b.samples_ms).p;
    row.spread = std::max(relative_iqr(b.samples_ms), relative_iqr(h.samples_ms));
  }
  // The paired eager reference ran the same code on the same stack in both processes: how far it moved
  // is how far the machine moved.
  if (base.reference && head.reference && base.problem_hash == head.problem_hash &&
      base.stack_hash == head.stack_hash && base.reference->method == head.reference->method &&
      base.reference->ms > 0 && head.reference->ms > 0) {
    row.control_ratio = head.reference->ms / base.reference->ms;
    boot.seed = stats::seed_for("compare-control/" + row.key, options.bootstrap.seed);
    row.adjusted_ci = stats::bootstrap_ratio_of_ratios(h.samples_ms, head.reference->samples_ms, b.samples_ms,
                                                       base.reference->samples_ms, h.statistic, boot);
  }
  if (base.gpu_busy_share || head.gpu_busy_share)
    row.busy_share = std::min(base.gpu_busy_share.value_or(1.0), head.gpu_busy_share.value_or(1.0));
}

// Data that cannot support a call: no interval, too few samples, or samples spread too wide. True (and the
// row classified too noisy, with the reason) when so.
bool too_little_to_call(comparison_row& row, const compare_options& options) {
  row.verdict = change_class::too_noisy;
  if (!row.ci.valid()) {
    row.reason = "no raw samples on a side: no interval";
    return true;
  }
  if (std::min(row.base_n, row.head_n) < options.min_samples) {
    row.reason = fmt::format("fewer than {} raw samples on a side ({} and {})", options.min_samples,
                             row.base_n, row.head_n);
    return true;
  }
  if (row.spread > options.max_spread) {
    row.reason =
        fmt::format("samples spread too wide (interquartile range {:.0f}% of the median; a loaded host?)",
                    100 * row.spread);
    return true;
  }
  return false;
}

void classify(comparison_row& row, const compare_options& options) {
  if (too_little_to_call(row, options)) return;
  const double high = 1 + options.min_effect, low = 1 / high;
  const double r = *row.ratio;
  // The effect: the ratio itself, or, where the paired eager reference ran the same code on the same stack
  // in both processes, the ratio against it (what moved the machine moved both).
  const bool controlled = row.control_ratio && row.adjusted_ci.valid();
  const double effect = controlled ? r / *row.control_ratio : r;
  const stats::interval effect_ci = controlled ? row.adjusted_ci : row.ci;
  const bool significant = row.q < options.alpha;
  // A call needs the absolute times to have moved that way beyond their noise, and the effect to reach
  // the minimum with its interval clear of 1.
  const bool slower = significant && row.ci.low > 1 && effect >= high && effect_ci.low > 1;
  const bool faster = significant && row.ci.high < 1 && effect <= low && effect_ci.high < 1;
  if (slower || faster) {
    if (!controlled && row.busy_share && *row.busy_share < options.min_busy_share) {
      row.verdict = change_class::too_noisy;
      row.reason = fmt::format("host-bound (GPU busy {:.0f}% of a call): its time follows the host",
                               100 * *row.busy_share);
      return;
    }
    row.verdict = slower ? change_class::regressed : change_class::improved;
    row.reason = controlled
                     ? fmt::format("x{:.3f} [{:.3f}, {:.3f}] against the paired reference; x{:.3f} "
                                   "[{:.3f}, {:.3f}] absolute, q = {:.2g}",
                                   effect, effect_ci.low, effect_ci.high, r, row.ci.low, row.ci.high, row.q)
                     : fmt::format("x{:.3f} [{:.3f}, {:.3f}], q = {:.2g}", r, row.ci.low, row.ci.high, row.q);
    return;
  }
  const bool moved = significant && ((row.ci.low > 1 && r >= high) || (row.ci.high < 1 && r <= low));
  if (controlled && moved) {
    row.verdict = change_class::too_noisy;
    row.reason = fmt::format("the paired eager reference moved x{:.3f} too; against it the change is x{:.3f} "
                             "[{:.3f}, {:.3f}]: the machine moved, not (only) the kernel",
                             *row.control_ratio, effect, effect_ci.low, effect_ci.high);
    return;
  }
  if (effect_ci.low >= low && effect_ci.high <= high) {
    row.verdict = change_class::unchanged;
    return;
  }
  row.verdict = change_class::too_noisy;
  // Say which interval: the table shows the absolute one, and the paired reference's may lie elsewhere.
  row.reason =
      fmt::format("the interval [{:.3f}, {:.3f}]{} reaches beyond the {:.0f}% minimum effect", effect_ci.low,
                  effect_ci.high,
                  controlled ? fmt::format(" against the paired eager reference (which moved x{:.3f})",
                                           *row.control_ratio)
                             : "",
                  100 * options.min_effect);
}

comparison_row pair_row(const std::string& key, const result_row& base, const result_row& head,
                        const compare_options& options) {
  comparison_row row;
  row.key = key;
  row.level = head.level;
  row.number = head.number;
  row.problem = head.problem_name;
  row.sample = head.sample;
  row.base_producer = base.producer;
  row.head_producer = head.producer;
  row.base_evaluation = base.evaluation_id;
  row.head_evaluation = head.evaluation_id;
  row.base_stack = base.stack_hash;
  row.head_stack = head.stack_hash;
  row.base_verdict = verdict_text(base);
  row.head_verdict = verdict_text(head);
  if (base.candidate) {
    row.base_ms = base.candidate->ms;
    row.base_n = base.candidate->samples_ms.size();
    row.base_timing = base.candidate->row_id;
  }
  if (head.candidate) {
    row.head_ms = head.candidate->ms;
    row.head_n = head.candidate->samples_ms.size();
    row.head_timing = head.candidate->row_id;
  }
  const bool base_ok = base.counted_correct(), head_ok = head.counted_correct();
  if (!base.judged() || !head.judged()) { // kj's own failure, or the problem's: nothing about the kernel
    row.reason = fmt::format("{} -> {}: not judged on a side (kj's or the problem's failure, never the "
                             "candidate's)",
                             row.base_verdict, row.head_verdict);
  } else if (base_ok && !head_ok) {
    row.verdict = change_class::broken;
    row.reason = fmt::format("{} -> {}", row.base_verdict, row.head_verdict);
  } else if (!base_ok && head_ok) {
    row.verdict = change_class::fixed;
    row.reason = fmt::format("{} -> {}", row.base_verdict, row.head_verdict);
  } else if (!base_ok) {
    row.reason = "fails on both sides";
  } else if (!base.untrusted.empty() ||
             !head.untrusted.empty()) { // a time kj does not trust compares nothing
    row.reason = "the candidate's time is not trusted on a side: " +
                 (base.untrusted.empty() ? head.untrusted : base.untrusted);
  } else if (base.candidate && head.candidate && base.candidate->ms > 0) {
    measure(base, head, options, row);
  } else {
    row.reason = "no candidate timing on a side";
  }
  return row;
}

void summarize(comparison& c) {
  std::vector<double> logs;
  for (const auto& row : c.rows) {
    ++c.counts[row.verdict];
    if (row.ratio) logs.push_back(std::log(*row.ratio));
  }
  c.timed = logs.size();
  if (logs.empty()) return;
  const auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v)
      s += x;
    return s / static_cast<double>(v.size());
  };
  c.geomean_ratio = std::exp(mean(logs));
  std::mt19937_64 rng(stats::seed_for("compare/geomean", c.options.bootstrap.seed));
  std::uniform_int_distribution<std::size_t> pick(0, logs.size() - 1);
  std::vector<double> replicates;
  for (int b = 0; b < c.options.bootstrap.replicates; ++b) {
    double s = 0;
    for (std::size_t i = 0; i < logs.size(); ++i)
      s += logs[pick(rng)];
    replicates.push_back(std::exp(s / static_cast<double>(logs.size())));
  }
  const double tail = (1 - c.options.bootstrap.confidence) / 2;
  c.geomean_ci = {stats::percentile(replicates, tail), stats::percentile(replicates, 1 - tail)};
}

} // namespace

comparison compare(const std::vector<result_row>& base, const std::vector<result_row>& head,
                   const compare_options& options) {
  comparison c;
  c.options = options;
  const bool with_producer = !(single_producer(base) && single_producer(head));
  const auto base_keys = by_key(base, with_producer), head_keys = by_key(head, with_producer);
  for (const auto& [key, b] : base_keys) {
    const auto h = head_keys.find(key);
    if (h == head_keys.end()) {
      c.only_base.push_back(key);
      continue;
    }
    c.rows.push_back(pair_row(key, *b, *h->second, options));
  }
  for (const auto& [key, h] : head_keys)
    if (!base_keys.contains(key)) c.only_head.push_back(key);
  std::vector<double> p;
  for (const auto& row : c.rows)
    p.push_back(row.ratio ? row.p : std::nan(""));
  const auto q = stats::benjamini_hochberg(p);
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    c.rows[i].q = q[i];
    if (c.rows[i].ratio) classify(c.rows[i], options);
  }
  summarize(c);
  return c;
}

} // namespace kj::reports
