// Implements the host probe: a multiply-add chain for the core's clock and a pointer chase for the caches.
#include "timing/host_probe.hpp"

#include "timing/host_clock.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

namespace kj::timing {
namespace {

constexpr std::size_t k_line_words = 64 / sizeof(std::uint32_t);

template <class Work>
double best_ns_per_step(int repeats, std::size_t steps, Work&& work) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = host_clock::now();
    work();
    const double ns = elapsed_ms(start, host_clock::now()) * 1e6 / static_cast<double>(steps);
    if (r == 0 || ns < best) best = ns;
  }
  return best;
}

} // namespace

double host_change(const std::vector<host_probe_result>& probes) {
  double lo = 0, hi = 0;
  for (const auto& p : probes) {
    if (p.cpu_ns <= 0) continue;
    lo = lo > 0 ? std::min(lo, p.cpu_ns) : p.cpu_ns;
    hi = std::max(hi, p.cpu_ns);
  }
  return lo > 0 ? hi / lo - 1 : 0;
}

host_probe::host_probe(std::size_t chase_bytes, std::size_t cpu_steps, std::size_t chase_steps)
    : m_cpu_steps(cpu_steps), m_chase_steps(chase_steps) {
  const std::size_t lines = std::max<std::size_t>(2, chase_bytes / 64);
  if (lines > UINT32_MAX / k_line_words)
    throw std::invalid_argument("host_probe: the chase buffer is too large");
  if (cpu_steps == 0 || chase_steps == 0) throw std::invalid_argument("host_probe: steps must be positive");
  // One random cycle through all lines (Sattolo's shuffle), so the hardware prefetcher cannot follow it.
  std::vector<std::uint32_t> order(lines);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(0x6b6a);
  for (std::size_t i = lines - 1; i > 0; --i)
    std::swap(order[i], order[std::uniform_int_distribution<std::size_t>(0, i - 1)(rng)]);
  m_next.assign(lines * k_line_words, 0);
  for (std::size_t i = 0; i < lines; ++i)
    m_next[order[i] * k_line_words] = static_cast<std::uint32_t>(order[(i + 1) % lines] * k_line_words);
}

std::size_t host_probe::chase_lines() const {
  return m_next.size() / k_line_words;
}

std::size_t host_probe::chase_cycle_lines() const {
  std::size_t n = 0;
  std::uint32_t at = 0;
  do {
    at = m_next[at];
    ++n;
  } while (at != 0 && n <= chase_lines());
  return n;
}

host_probe_result host_probe::measure(int repeats) {
  host_probe_result result;
  std::uint64_t x = m_sink + 1;
  result.cpu_ns = best_ns_per_step(repeats, m_cpu_steps, [&] {
    for (std::size_t i = 0; i < m_cpu_steps; ++i)
      x = x * 6364136223846793005ull + 1442695040888963407ull; // each step waits for the previous multiply
    m_sink = x;
  });
  std::uint32_t at = 0;
  result.mem_ns = best_ns_per_step(repeats, m_chase_steps, [&] {
    for (std::size_t i = 0; i < m_chase_steps; ++i)
      at = m_next[at];
    m_sink = at;
  });
  return result;
}

} // namespace kj::timing
