// Micro-benchmarks of the CUDA timer's own costs (GPU machine only): a sample on nothing, and the L2 flush.
#if defined(KJ_HAVE_CUDA_LOADER)

#include "cuda/plugin_loader.hpp"

#include <benchmark/benchmark.h>
#include <memory>
#include <string>

namespace {

constexpr std::size_t k_samples = 200; // per kj_cuda_measure call, fixed (no convergence stop)

// The plugin, or the reason it cannot be had (no driver, built without CUDA): benchmarks then skip.
const kj::cuda::plugin* cuda_plugin(std::string& why) {
  static std::string failure;
  static const std::unique_ptr<kj::cuda::plugin> instance = []() -> std::unique_ptr<kj::cuda::plugin> {
    try {
      auto p = std::make_unique<kj::cuda::plugin>();
      p->device(); // binds a context, fails here without a driver
      return p;
    } catch (const std::exception& e) {
      failure = e.what();
      return nullptr;
    }
  }();
  why = failure;
  return instance.get();
}

kj::cuda::measure_options fixed_samples(bool flush) {
  kj::cuda::measure_options o;
  o.flush_l2 = flush;
  o.params.warmup_min_calls = 1;
  o.params.warmup_max_calls = 1;
  o.params.warmup_min_ms = 0;
  o.params.stopping.min_samples = k_samples;
  o.params.stopping.max_samples = k_samples;
  o.params.stopping.target_rel_ci = 0; // never "converged": exactly k_samples samples
  o.params.stopping.min_time_ms = 0;
  o.params.stopping.max_time_ms = 1e9;
  o.params.max_wall_ms = 1e9;
  return o;
}

// Wall time per sample (`per_sample`) of the whole cycle on an empty callback: events, device-wide sync,
// elapsed time, bookkeeping. `event_us` is what such a sample reads: the timer floor; `host_us` the host
// clock.
void run_samples(benchmark::State& state, bool flush) {
  std::string why;
  const auto* plugin = cuda_plugin(why);
  if (plugin == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const auto options = fixed_samples(flush);
  double event_ms = 0;
  double host_ms = 0;
  std::size_t flush_bytes = 0;
  for (auto _ : state) {
    const auto m = plugin->measure([] {}, options);
    event_ms += m.events.stats.median;
    host_ms += m.host_stats.median;
    flush_bytes = m.flush_bytes;
  }
  const auto iterations = static_cast<double>(state.iterations());
  state.counters["per_sample"] =
      benchmark::Counter(iterations * k_samples, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["event_us"] = event_ms * 1e3 / iterations;
  state.counters["host_us"] = host_ms * 1e3 / iterations;
  state.counters["flush_MiB"] = static_cast<double>(flush_bytes) / (1 << 20);
}

void bm_cuda_sample_empty_hot(benchmark::State& state) {
  run_samples(state, false);
}
BENCHMARK(bm_cuda_sample_empty_hot)->Unit(benchmark::kMillisecond);

// The same with the L2 flush before every sample: the difference in per_sample is the flush's cost (memset of
// 3 x L2 and the stream synchronization that keeps it out of the host clock).
void bm_cuda_sample_empty_flushed(benchmark::State& state) {
  run_samples(state, true);
}
BENCHMARK(bm_cuda_sample_empty_flushed)->Unit(benchmark::kMillisecond);

// The floor through kj_cuda_timer_floor (no callback at all, so no trampoline either).
void bm_cuda_timer_floor(benchmark::State& state) {
  std::string why;
  const auto* plugin = cuda_plugin(why);
  if (plugin == nullptr) {
    state.SkipWithError(why.c_str());
    return;
  }
  const auto options = fixed_samples(true);
  double event_ms = 0;
  for (auto _ : state)
    event_ms += plugin->timer_floor(options).events.stats.median;
  state.counters["event_us"] = event_ms * 1e3 / static_cast<double>(state.iterations());
}
BENCHMARK(bm_cuda_timer_floor)->Unit(benchmark::kMillisecond);

} // namespace

#endif // KJ_HAVE_CUDA_LOADER
