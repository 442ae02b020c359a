// The physical floor of a timed call: the least time any kernel on this GPU can take for a problem, from the
// bytes its inputs and outputs must move over device memory and the operations its reference counts, at the
// device's peaks. A measured time below it is impossible (a result cached, skipped or forged), and the ratio
// floor / measured is the kernel's fraction of the speed of light.
#pragma once

namespace kj::timing {

struct device_peaks {
  double bytes_per_s = 0; // device memory bandwidth: 2 x memory clock x bus width (DDR/HBM)
  double ops_per_s = 0;   // the fastest dense tensor-core rate of the architecture (8-bit), all SMs at boost
  double l2_bytes = 0;    // what an output may leave in L2 unwritten when the call ends
};

// From the driver's attributes. An architecture kj does not know gets the largest rate per SM it knows, so
// the floor only errs low.
device_peaks peaks_of(int cc_major, int cc_minor, int sm_count, double sm_clock_khz, double memory_clock_khz,
                      int memory_bus_bits, double l2_bytes);

struct physical_floor {
  double bytes = 0;      // read from device memory (every input, after kj's L2 flush) + written past L2
  double flops = 0;      // counted on the reference (matmuls, convolutions, attention; other ops count 0)
  double memory_ms = 0;  // [ms] bytes at peak bandwidth
  double compute_ms = 0; // [ms] flops at the peak rate
  double floor_ms = 0;   // [ms] the larger of the two
};

physical_floor floor_of(double input_bytes, double output_bytes, double flops, const device_peaks& peaks);

} // namespace kj::timing
