// Micro-benchmarks of the timing core's own costs: statistics, stopping rule, host flush, host timer floor,
// host probe.
#include "timing/cache_flush.hpp"
#include "timing/host_probe.hpp"
#include "timing/measure.hpp"
#include "timing/statistics.hpp"
#include "timing/stopping_rule.hpp"

#include <benchmark/benchmark.h>
#include <limits>
#include <random>
#include <vector>

namespace {

using namespace kj::timing;

std::vector<double> lognormal_samples(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::lognormal_distribution<double> dist(0.0, 0.3);
  std::vector<double> samples(n);
  for (double& x : samples)
    x = dist(rng);
  return samples;
}

// summarize(): one sort plus a pass; n = 10k is the stopping rule's default sample cap.
void bm_summarize(benchmark::State& state) {
  const auto samples = lognormal_samples(static_cast<std::size_t>(state.range(0)), 1);
  for (auto _ : state) {
    auto s = summarize(samples);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(bm_summarize)->Arg(100)->Arg(10'000);

// stopping_rule::add over a whole run that never converges (target 0), so every scheduled check runs:
// the per-sample counter is the amortized cost of add(), checks included.
void bm_stopping_rule_add(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto samples = lognormal_samples(n, 2);
  stopping_params params;
  params.target_rel_ci = 0;
  params.min_time_ms = 0;
  params.max_time_ms = std::numeric_limits<double>::max();
  params.max_samples = n;
  for (auto _ : state) {
    stopping_rule rule(params);
    for (const double x : samples)
      rule.add(x);
    benchmark::DoNotOptimize(rule.done());
  }
  state.counters["per_sample"] = benchmark::Counter(
      static_cast<double>(state.iterations() * n), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(bm_stopping_rule_add)->Arg(1000)->Arg(10'000)->Unit(benchmark::kMicrosecond);

// One flush of the automatic buffer (2x the detected LLC): the per-sample overhead the host timer adds.
void bm_host_cache_flush(benchmark::State& state) {
  host_cache_flusher flusher;
  for (auto _ : state)
    flusher.flush();
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(flusher.bytes()));
  state.counters["buffer_MiB"] = static_cast<double>(flusher.bytes()) / (1 << 20);
}
BENCHMARK(bm_host_cache_flush)->Unit(benchmark::kMillisecond);

// start(), call(), stop_ms() on an empty function: the timer floor. Wall time per iteration is the cost of a
// sample; `sample_ns` is what such a sample reads, the smallest duration the host subject can resolve.
void bm_host_subject_empty(benchmark::State& state) {
  host_subject subject([] {}, 64);
  double total_ms = 0;
  for (auto _ : state) {
    subject.start();
    subject.call();
    total_ms += subject.stop_ms();
  }
  state.counters["sample_ns"] = total_ms * 1e6 / static_cast<double>(state.iterations());
}
BENCHMARK(bm_host_subject_empty);

// One host probe as the worker takes it before and after each subject (3 repeats of both workloads); the
// counters are what it read.
void bm_host_probe(benchmark::State& state) {
  host_probe probe;
  host_probe_result r;
  for (auto _ : state)
    r = probe.measure();
  state.counters["cpu_ns"] = r.cpu_ns;
  state.counters["mem_ns"] = r.mem_ns;
}
BENCHMARK(bm_host_probe)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
