// Implements the report statistics; see stats.hpp and docs/reports.md.
#include "reports/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kj::reports::stats {

statistic parse_statistic(const std::string& name) {
  if (name == "median") return statistic::median;
  if (name == "mean") return statistic::mean;
  throw std::invalid_argument("unknown statistic '" + name + "' (expected median or mean)");
}

const char* statistic_name(statistic s) {
  return s == statistic::median ? "median" : "mean";
}

namespace {

double median_sorted(std::span<const double> sorted) {
  const double position = 0.5 * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  const double fraction = position - static_cast<double>(below);
  if (below + 1 >= sorted.size()) return sorted[below];
  return sorted[below] + fraction * (sorted[below + 1] - sorted[below]);
}

double beta(std::mt19937_64& rng, double a, double b) {
  const double x = std::gamma_distribution<double>(a, 1.0)(rng);
  const double y = std::gamma_distribution<double>(b, 1.0)(rng);
  return x / (x + y);
}

double uniform01(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

} // namespace

double compute(statistic s, std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("a statistic of no samples");
  if (s == statistic::mean)
    return std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  return median_sorted(sorted);
}

resampler::resampler(std::span<const double> samples, statistic s)
    : m_sorted(samples.begin(), samples.end()), m_statistic(s) {
  std::sort(m_sorted.begin(), m_sorted.end());
}

double resampler::at(double u) const {
  const auto index = static_cast<std::size_t>(u * static_cast<double>(m_sorted.size()));
  return m_sorted[std::min(index, m_sorted.size() - 1)];
}

double resampler::draw(std::mt19937_64& rng) const {
  const std::size_t n = m_sorted.size();
  if (m_statistic == statistic::mean) {
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i)
      sum += m_sorted[pick(rng)];
    return sum / static_cast<double>(n);
  }
  const auto k = static_cast<double>((n + 1) / 2); // the lower middle rank, 1-based
  const double nd = static_cast<double>(n);
  const double u1 = beta(rng, k, nd - k + 1);
  if (n % 2 == 1) return at(u1);
  // The next order statistic: the minimum of the n - k uniforms above u1.
  const double u2 = u1 + (1 - u1) * (1 - std::pow(uniform01(rng), 1 / (nd - k)));
  return 0.5 * (at(u1) + at(u2));
}

double percentile(std::vector<double>& values, double p) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double position = p * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(position);
  if (below + 1 >= values.size()) return values.back();
  return values[below] + (position - static_cast<double>(below)) * (values[below + 1] - values[below]);
}

interval bootstrap_ratio(std::span<const double> numerator, std::span<const double> denominator, statistic s,
                         const bootstrap_options& options) {
  if (numerator.empty() || denominator.empty() || options.replicates < 2) return {};
  const resampler top(numerator, s), bottom(denominator, s);
  std::mt19937_64 rng(options.seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r) {
    const double n = top.draw(rng), d = bottom.draw(rng);
    if (!(d > 0)) return {};
    ratios.push_back(n / d);
  }
  const double tail = (1 - options.confidence) / 2;
  return {percentile(ratios, tail), percentile(ratios, 1 - tail)};
}

interval bootstrap_ratio_of_ratios(std::span<const double> a, std::span<const double> b,
                                   std::span<const double> c, std::span<const double> d, statistic s,
                                   const bootstrap_options& options) {
  if (a.empty() || b.empty() || c.empty() || d.empty() || options.replicates < 2) return {};
  const resampler ra(a, s), rb(b, s), rc(c, s), rd(d, s);
  std::mt19937_64 rng(options.seed);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r) {
    const double va = ra.draw(rng), vb = rb.draw(rng), vc = rc.draw(rng), vd = rd.draw(rng);
    if (!(vb > 0) || !(vc > 0) || !(vd > 0)) return {};
    values.push_back(va / vb / (vc / vd));
  }
  const double tail = (1 - options.confidence) / 2;
  return {percentile(values, tail), percentile(values, 1 - tail)};
}

interval bootstrap_statistic(std::span<const double> samples, statistic s, const bootstrap_options& options) {
  if (samples.empty() || options.replicates < 2) return {};
  const resampler side(samples, s);
  std::mt19937_64 rng(options.seed);
  std::vector<double> values;
  values.reserve(static_cast<std::size_t>(options.replicates));
  for (int r = 0; r < options.replicates; ++r)
    values.push_back(side.draw(rng));
  const double tail = (1 - options.confidence) / 2;
  return {percentile(values, tail), percentile(values, 1 - tail)};
}

mann_whitney_result mann_whitney(std::span<const double> a, std::span<const double> b) {
  mann_whitney_result result;
  if (a.empty() || b.empty()) return result;
  std::vector<std::pair<double, int>> all;
  all.reserve(a.size() + b.size());
  for (double v : a)
    all.emplace_back(v, 0);
  for (double v : b)
    all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  double rank_sum_a = 0, ties = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first)
      ++j;
    const double average_rank = 0.5 * static_cast<double>(i + 1 + j); // ranks i+1 .. j
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += average_rank;
    i = j;
  }
  result.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)));
  if (!(variance > 0)) return result;
  const double distance = std::max(0.0, std::abs(result.u - mean) - 0.5);
  result.z = std::copysign(distance / std::sqrt(variance), result.u - mean);
  result.p = std::min(1.0, std::erfc(distance / std::sqrt(variance) / std::sqrt(2.0)));
  return result;
}

std::vector<double> benjamini_hochberg(std::span<const double> p) {
  std::vector<double> q(p.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] == p[i]) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return p[x] < p[y]; });
  const double m = static_cast<double>(order.size());
  double running = 1.0;
  for (std::size_t r = order.size(); r-- > 0;) {
    running = std::min(running, p[order[r]] * m / static_cast<double>(r + 1));
    q[order[r]] = running;
  }
  return q;
}

double geomean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0;
  for (double v : values) {
    if (!(v > 0)) return std::numeric_limits<double>::quiet_NaN();
    sum += std::log(v);
  }
  return std::exp(sum / static_cast<double>(values.size()));
}

std::uint64_t seed_for(const std::string& key, std::uint64_t base) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  // splitmix64's finalizer spreads the bits of nearby keys.
  std::uint64_t z = h ^ base;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

} // namespace kj::reports::stats
