// `kj compare --calibrate`: the false-alarm rate of an A/A pair as it is, and the detection rate of slowdowns
// injected into HEAD's candidate samples (semi-synthetic: real noise, a known effect).
#include "reports/compare.hpp"

#include <fmt/format.h>
#include <set>

namespace kj::reports {

double injection_result::detection_rate() const {
  return injected ? static_cast<double>(detected) / static_cast<double>(injected) : 0.0;
}

double calibration::false_alarm_rate() const {
  return eligible ? static_cast<double>(false_regressions) / static_cast<double>(eligible) : 0.0;
}

bool calibration::passed() const {
  if (eligible == 0 || false_alarm_rate() > options.target_false_alarm) return false;
  for (const auto& i : injections)
    if (i.injected == 0 || i.detection_rate() < options.target_detection) return false;
  return true;
}

namespace {

bool eligible(const comparison_row& row) {
  return row.ratio.has_value();
}

// HEAD with the candidate timings of `chosen` evaluations slowed by a factor: every raw sample and the
// headline, so that what compare reads is what a slower kernel would have produced.
std::vector<result_row> inject(const std::vector<result_row>& head, const std::set<std::int64_t>& chosen,
                               double factor) {
  std::vector<result_row> out = head;
  for (auto& r : out) {
    if (!chosen.contains(r.evaluation_id) || !r.candidate) continue;
    r.candidate->ms *= factor;
    for (double& v : r.candidate->samples_ms)
      v *= factor;
    r.candidate_median_ms = r.candidate->ms;
  }
  return out;
}

void count_round(const comparison& c, const std::set<std::int64_t>& chosen, const compare_options& options,
                 injection_result& result) {
  for (const auto& row : c.rows) {
    if (!eligible(row)) continue;
    const bool regressed = row.verdict == change_class::regressed;
    if (!chosen.contains(row.head_evaluation)) {
      result.other_regressed += regressed ? 1 : 0;
      continue;
    }
    ++result.injected;
    result.detected += regressed ? 1 : 0;
    if (!regressed) ++result.missed[row.verdict];
    if (row.busy_share && *row.busy_share >= options.min_busy_share) {
      ++result.gpu_bound_injected;
      result.gpu_bound_detected += regressed ? 1 : 0;
    }
  }
}

} // namespace

calibration calibrate(const std::vector<result_row>& base, const std::vector<result_row>& head,
                      const compare_options& options, const calibration_options& calibration_opts) {
  calibration cal;
  cal.options = calibration_opts;
  cal.aa = compare(base, head, options);
  std::vector<std::int64_t> targets; // HEAD evaluations of the eligible rows, in key order
  for (const auto& row : cal.aa.rows) {
    if (!eligible(row)) continue;
    ++cal.eligible;
    targets.push_back(row.head_evaluation);
    cal.false_regressions += row.verdict == change_class::regressed ? 1 : 0;
    cal.false_improvements += row.verdict == change_class::improved ? 1 : 0;
  }
  const int rounds = std::max(1, calibration_opts.rounds);
  for (double slowdown : calibration_opts.slowdowns) {
    injection_result result;
    result.slowdown = slowdown;
    for (int k = 0; k < rounds; ++k) {
      std::set<std::int64_t> chosen;
      for (std::size_t i = 0; i < targets.size(); ++i)
        if (static_cast<int>(i % static_cast<std::size_t>(rounds)) == k) chosen.insert(targets[i]);
      if (chosen.empty()) continue;
      count_round(compare(base, inject(head, chosen, 1 + slowdown), options), chosen, options, result);
    }
    cal.injections.push_back(result);
  }
  return cal;
}

std::string calibration_text(const calibration& c) {
  std::string out = fmt::format(
      "calibration of kj compare (minimum effect {:.1f}%, FDR {:.2f})\nA/A pair: base {} / head {}\n",
      100 * c.aa.options.min_effect, c.aa.options.alpha, c.aa.base.selector, c.aa.head.selector);
  out += fmt::format(
      "A/A: {} problems timed on both sides; {} called regressed (false-alarm rate {:.1f}%, "
      "target <= {:.1f}%: {}), {} called improved\n",
      c.eligible, c.false_regressions, 100 * c.false_alarm_rate(), 100 * c.options.target_false_alarm,
      c.false_alarm_rate() <= c.options.target_false_alarm ? "met" : "NOT MET", c.false_improvements);
  for (const auto& [k, n] : c.aa.counts)
    out += fmt::format("  A/A {:<10} {}\n", change_name(k), n);
  for (const auto& i : c.injections) {
    out += fmt::format(
        "injected x{:.3f} into HEAD's samples of each problem once ({} rounds): {} of {} detected "
        "({:.1f}%, target >= {:.0f}%: {}); {} other problems called regressed meanwhile",
        1 + i.slowdown, c.options.rounds, i.detected, i.injected, 100 * i.detection_rate(),
        100 * c.options.target_detection,
        i.injected && i.detection_rate() >= c.options.target_detection ? "met" : "NOT MET",
        i.other_regressed);
    if (i.gpu_bound_injected)
      out += fmt::format("; GPU-bound problems: {} of {}", i.gpu_bound_detected, i.gpu_bound_injected);
    out += "\n";
    for (const auto& [k, n] : i.missed)
      out += fmt::format("  missed as {:<10} {}\n", change_name(k), n);
  }
  out += fmt::format("calibration {}\n", c.passed() ? "PASSED" : "FAILED");
  return out;
}

nlohmann::json calibration_json(const calibration& c) {
  nlohmann::json injections = nlohmann::json::array();
  for (const auto& i : c.injections) {
    nlohmann::json missed = nlohmann::json::object();
    for (const auto& [k, n] : i.missed)
      missed[change_name(k)] = n;
    injections.push_back({{"slowdown", i.slowdown},
                          {"injected", i.injected},
                          {"detected", i.detected},
                          {"detection_rate", i.detection_rate()},
                          {"other_regressed", i.other_regressed},
                          {"gpu_bound_injected", i.gpu_bound_injected},
                          {"gpu_bound_detected", i.gpu_bound_detected},
                          {"missed", missed}});
  }
  return {{"format", "kj-compare-calibration"},
          {"format_version", 1},
          {"aa", compare_json(c.aa)},
          {"eligible", c.eligible},
          {"false_regressions", c.false_regressions},
          {"false_improvements", c.false_improvements},
          {"false_alarm_rate", c.false_alarm_rate()},
          {"target_false_alarm", c.options.target_false_alarm},
          {"target_detection", c.options.target_detection},
          {"rounds", c.options.rounds},
          {"injections", injections},
          {"passed", c.passed()}};
}

} // namespace kj::reports
