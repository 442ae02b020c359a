// Tests the host cache flusher and the host subject (behaviour only: no assertions on measured times).
#include "tests/support/catch_compat.hpp"
#include "timing/cache_flush.hpp"
#include "timing/measure.hpp"

#include <algorithm>
#include <stdexcept>

using kj::timing::detect_llc_bytes;
using kj::timing::host_cache_flusher;
using kj::timing::host_subject;
using kj::timing::measure_cold;
using kj::timing::measure_params;

TEST_CASE("host_cache_flusher sizes its buffer from the last-level cache", "[timing][flush]") {
  const std::size_t llc = detect_llc_bytes();
  const std::size_t expected = std::min(2 * (llc > 0 ? llc : host_cache_flusher::k_fallback_llc_bytes),
                                        host_cache_flusher::k_max_bytes);
  host_cache_flusher flusher;
  CHECK(flusher.bytes() >= expected);
  CHECK(flusher.bytes() < expected + 64);
  CHECK(flusher.bytes() <= host_cache_flusher::k_max_bytes);
  CHECK(flusher.bytes() >= 2 * std::min(llc, host_cache_flusher::k_max_bytes / 2));
  flusher.flush();
  flusher.flush();
}

TEST_CASE("host_cache_flusher honours an explicit size in whole cache lines", "[timing][flush]") {
  CHECK(host_cache_flusher(1000).bytes() == 1024);
  CHECK(host_cache_flusher(1).bytes() == 64);
  host_cache_flusher flusher(std::size_t{1} << 20);
  CHECK(flusher.bytes() == std::size_t{1} << 20);
  for (int i = 0; i < 3; ++i)
    flusher.flush();
}

TEST_CASE("detect_llc_bytes reports a plausible size where the kernel exposes one", "[timing][flush]") {
  const std::size_t llc = detect_llc_bytes();
  if (llc == 0) {
    WARN("no last-level cache size available; the flusher falls back to 2 x 64 MiB");
    return;
  }
  CHECK(llc >= std::size_t{256} << 10); // no server CPU of the last decade has a smaller LLC
  CHECK(llc <= std::size_t{4} << 30);
}

TEST_CASE("host_subject runs the function once per sample, warmup included", "[timing][measure]") {
  std::size_t calls = 0;
  host_subject subject([&] { ++calls; }, 4096);
  measure_params params;
  params.warmup_min_calls = 4;
  params.warmup_max_calls = 4;
  params.stopping.min_samples = 20;
  params.stopping.max_samples = 200;
  params.stopping.min_time_ms = 0;
  const auto m = measure_cold(subject, params);
  CHECK(m.warmup_calls == 4);
  CHECK(calls == m.warmup_calls + m.samples_ms.size());
  CHECK(m.samples_ms.size() >= 1);
  CHECK(m.samples_ms.size() <= 200);
  CHECK(std::all_of(m.samples_ms.begin(), m.samples_ms.end(), [](double x) { return x >= 0.0; }));
  CHECK(m.stats.min >= 0.0);
}

TEST_CASE("host_subject rejects an empty function", "[timing][measure]") {
  CHECK_THROWS_AS(host_subject(std::function<void()>{}, 64), std::invalid_argument);
}
