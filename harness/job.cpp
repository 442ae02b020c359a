// KernelBench's correctness rules per version (REFERENCE §3): fp32 tolerance 1e-4 on main, 1e-2 on v0 and
// v0.1.
#include "harness/job.hpp"

#include <stdexcept>

namespace kj {

protocol_spec kernelbench_protocol(const std::string& kb_version) {
  protocol_spec spec;
  if (kb_version == "main") {
    spec.atol = spec.rtol = 1e-4;
  } else if (kb_version == "v0.1" || kb_version == "v0") {
    spec.atol = spec.rtol = 1e-2;
  } else {
    throw std::invalid_argument("unknown KernelBench version '" + kb_version +
                                "' (expected main, v0.1 or v0)");
  }
  spec.name = "kernelbench-" + kb_version;
  return spec;
}

} // namespace kj
