// Implements the noise notes of a row's speedup (metrics.hpp: rounds_disagree, noise_of).
#include "reports/metrics.hpp"
#include "timing/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kj::reports {

namespace {

// The median of each timing round of a timing (params.round_samples: the rounds' sample counts, in order);
// empty when the timing has one round or says nothing of them.
std::vector<double> round_medians(const db::timing_row& t) {
  const auto params = nlohmann::json::parse(t.params_json, nullptr, false);
  const auto sizes =
      params.is_object() ? params.value("round_samples", nlohmann::json::array()) : nlohmann::json::array();
  std::vector<double> medians;
  std::size_t at = 0;
  for (const auto& size : sizes) {
    const std::size_t n = size.is_number_unsigned() ? size.get<std::size_t>() : 0;
    if (n == 0 || at + n > t.samples_ms.size()) return {};
    std::vector<double> round;
    for (std::size_t i = at; i < at + n; ++i)
      if (std::isfinite(t.samples_ms[i])) round.push_back(t.samples_ms[i]);
    if (round.empty()) return {};
    std::nth_element(round.begin(), round.begin() + static_cast<std::ptrdiff_t>(round.size() / 2),
                     round.end());
    medians.push_back(round[round.size() / 2]);
    at += n;
  }
  return at == t.samples_ms.size() && medians.size() >= 2 ? medians : std::vector<double>{};
}

} // namespace

std::string rounds_disagree(const db::timing_row& candidate, const db::timing_row& reference) {
  const auto c = round_medians(candidate), f = round_medians(reference);
  if (c.empty() || c.size() != f.size()) return "";
  double low = std::numeric_limits<double>::infinity(), high = 0;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] <= 0) return "";
    low = std::min(low, f[i] / c[i]);
    high = std::max(high, f[i] / c[i]);
  }
  if (low > 1 || high < 1) return "";
  return fmt::format("{}: the speedups of its {} rounds run from {:.3f} to {:.3f}", k_rounds_disagree,
                     c.size(), low, high);
}

std::string noise_of(const result_row& r, const nlohmann::json& params) {
  if (!r.speedup) return "";
  std::string noise;
  if (r.speedup_ci.valid() && !r.speedup_ci.excludes(1.0))
    noise = fmt::format("its 95% interval [{:.3f}, {:.3f}] includes 1", r.speedup_ci.low, r.speedup_ci.high);
  // One robust round (--quick, --rounds 1): the candidate's and the reference's timings then come from two
  // moments only, and a host whose speed drifted between them looks like a speedup the probes may not see.
  // KernelBench's method times each side once, whatever --rounds says (two host probes, not six).
  const std::string method = params.is_object() ? params.value("method", "") : "";
  if ((method == "robust" && params.value("rounds", 0) == 1) || method == "kernelbench")
    noise +=
        fmt::format("{}one timing round (--quick, --rounds 1 or --timing-method kernelbench): a drift of "
                    "the host between the "
                    "candidate's round and the reference's cannot be told from a speedup",
                    noise.empty() ? "" : "; ");
  const double moved = params.is_object() ? params.value("host_change_pair", 0.0) : 0.0;
  if (moved > k_host_moved)
    noise += fmt::format("{}the host's speed moved by {:.0f}% while it was timed", noise.empty() ? "" : "; ",
                         100 * moved);
  const auto clock = params.is_object() ? params.value("judge_clock", nlohmann::json()) : nlohmann::json();
  const auto charged = [&](const char* key) { return clock.is_object() ? clock.value(key, 0.0) : 0.0; };
  // The handshake's per-call charges (one object per round, or one for a single round).
  nlohmann::json rounds = params.is_object() ? params.value("handshake", nlohmann::json()) : nlohmann::json();
  if (rounds.is_object()) rounds = nlohmann::json::array({rounds});
  std::size_t calls = 0, charged_calls = 0;
  double charge_ms = 0;
  for (const auto& h : rounds.is_array() ? rounds : nlohmann::json::array()) {
    if (!h.is_object()) continue;
    calls += h.value("runner_samples_ms", nlohmann::json::array()).size();
    charged_calls += h.value("charged_calls", std::size_t{0});
    charge_ms += h.value("total_charge_ms", 0.0);
  }
  if (charged_calls > 0 && calls > 0)
    noise +=
        fmt::format("{}{} of {} calls charged {:.3f} ms on average: the judge's clock around them saw more "
                    "than the candidate's timer",
                    noise.empty() ? "" : "; ", charged_calls, calls, charge_ms / static_cast<double>(calls));
  if (params.is_object() && params.contains("clock_doubt"))
    noise += fmt::format("{}{}: {}", noise.empty() ? "" : "; ", k_clock_doubt,
                         params.value("clock_doubt", std::string()));
  else if (2 * charged_calls > calls) // most calls, whether or not the judge called its rounds systematic
    noise += fmt::format("{}{}: {} of {}", noise.empty() ? "" : "; ", k_clock_doubt, charged_calls, calls);
  if (params.is_object() && params.value("co_tenants", 0) > 0)
    noise += fmt::format("{}{} other process(es) used the GPU while it was timed", noise.empty() ? "" : "; ",
                         params.value("co_tenants", 0));
  if (params.is_object() && params.value("throttled", false))
    noise +=
        fmt::format("{}the GPU's clocks were slowed (NVML) while it was timed", noise.empty() ? "" : "; ");
  if (const double ms = charged("draw_charge_ms"); ms > 0)
    noise += fmt::format("{}{:.3f} ms a call charged: kj's input draw was slower in the candidate's process",
                         noise.empty() ? "" : "; ", ms);
  return noise;
}

} // namespace kj::reports
