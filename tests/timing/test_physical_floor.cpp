// The physical floor of a timed call (timing/physical_floor.hpp): what no kernel on the GPU can beat.
#include "tests/support/catch_compat.hpp"
#include "timing/physical_floor.hpp"

using kj::timing::floor_of;
using kj::timing::peaks_of;

TEST_CASE("an H200's peaks come from its attributes, and a problem's floor from its bytes and FLOPs") {
  // H200: 132 SMs, boost 1980 MHz, HBM3e at 3201 MHz on a 6144-bit bus, 60 MiB L2 (the driver's attributes).
  const auto h200 = peaks_of(9, 0, 132, 1'980'000, 3'201'000, 6144, 60.0 * (1 << 20));
  CHECK(h200.bytes_per_s == Approx(4.917e12).epsilon(0.01)); // the vendor's 4.8 TB/s
  CHECK(h200.ops_per_s == Approx(2.141e15).epsilon(0.01));   // FP8 dense, the largest rate
  // KernelBench L1 19 (ReLU, 4096 x 393216 fp32): 6.4 GB in, 6.4 GB out.
  const double bytes = 4096.0 * 393216 * 4;
  const auto relu = floor_of(bytes, bytes, 0, h200);
  CHECK(relu.floor_ms == Approx(1e3 * (2 * bytes - 60.0 * (1 << 20)) / 4.917e12).epsilon(0.01));
  CHECK(relu.compute_ms == 0);
  // L1 1 (4096^3 matmul): 2 x 4096^3 FLOPs outweigh its 192 MiB.
  const double n = 4096;
  const auto mm = floor_of(2 * n * n * 4, n * n * 4, 2 * n * n * n, h200);
  CHECK(mm.compute_ms > mm.memory_ms);
  CHECK(mm.floor_ms == Approx(1e3 * 2 * n * n * n / 2.141e15).epsilon(0.01)); // 0.064 ms: an honest fp32 one
                                                                              // takes about 3 ms
  // An output smaller than L2 may stay there: only its inputs must move.
  CHECK(floor_of(1e6, 1e6, 0, h200).bytes == Approx(1e6));
}

TEST_CASE("an unknown architecture gets the largest known rate, so its floor errs low") {
  const auto known = peaks_of(9, 0, 100, 1e6, 1e6, 1024, 0);
  const auto unknown = peaks_of(42, 0, 100, 1e6, 1e6, 1024, 0);
  CHECK(unknown.ops_per_s >= known.ops_per_s);
  CHECK(peaks_of(0, 0, 0, 0, 0, 0, 0).bytes_per_s == 0);
  CHECK(floor_of(1e9, 0, 1e12, peaks_of(0, 0, 0, 0, 0, 0, 0)).floor_ms == 0); // no peaks: no floor
}
