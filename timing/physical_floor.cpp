// Implements the physical floor: device peaks from the driver's attributes, and the floor of a call.
#include "timing/physical_floor.hpp"

#include <algorithm>

namespace kj::timing {
namespace {

// Dense 8-bit tensor-core operations per clock per SM (FP8 where the architecture has it, else INT8; V100:
// FP16), from the vendors' peak tables divided by SMs x boost clock: the most any kernel can do per clock.
double ops_per_clock_per_sm(int major, int minor) {
  const int cc = 10 * major + minor;
  if (cc >= 100) return 16384; // Blackwell
  if (cc >= 90) return 8192;   // Hopper: H100 SXM 1979 TFLOP/s FP8 = 132 SMs x 1.83 GHz x 8192
  if (cc == 80) return 4096;   // A100: 624 TOPS INT8 = 108 x 1.41 GHz x 4096
  if (cc >= 75) return 2048;   // Turing, GA10x, Ada: T4, A10, L4, L40S
  if (cc >= 70) return 1024;   // V100 FP16: 125 TFLOP/s = 80 x 1.53 GHz x 1024
  return 16384;                // unknown: the largest known
}

} // namespace

device_peaks peaks_of(int cc_major, int cc_minor, int sm_count, double sm_clock_khz, double memory_clock_khz,
                      int memory_bus_bits, double l2_bytes) {
  device_peaks p;
  p.bytes_per_s = 2.0 * memory_clock_khz * 1e3 * memory_bus_bits / 8.0;
  p.ops_per_s = ops_per_clock_per_sm(cc_major, cc_minor) * sm_count * sm_clock_khz * 1e3;
  p.l2_bytes = l2_bytes;
  return p;
}

physical_floor floor_of(double input_bytes, double output_bytes, double flops, const device_peaks& peaks) {
  physical_floor f;
  f.bytes = std::max(0.0, input_bytes) + std::max(0.0, output_bytes - peaks.l2_bytes);
  f.flops = std::max(0.0, flops);
  f.memory_ms = peaks.bytes_per_s > 0 ? 1e3 * f.bytes / peaks.bytes_per_s : 0;
  f.compute_ms = peaks.ops_per_s > 0 ? 1e3 * f.flops / peaks.ops_per_s : 0;
  f.floor_ms = std::max(f.memory_ms, f.compute_ms);
  return f;
}

} // namespace kj::timing
