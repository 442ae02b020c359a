// The compatible-verdict protocols (REFERENCE §3, §4): KernelBench per version and precision, and CUDA
// Agent's.
#include "engine/exec/messages.hpp"

#include <stdexcept>

namespace kj::exec {
namespace {

// tf32 is fp32 tensors with TF32 matmuls and convolutions (kj baselines and kj audit: the numerics a
// candidate that turns TF32 on computes at); its tolerance is fp32's.
void check_precision(const std::string& precision) {
  if (precision != "fp32" && precision != "fp16" && precision != "bf16" && precision != "tf32")
    throw std::invalid_argument("unknown precision '" + precision + "' (expected fp32, tf32, fp16 or bf16)");
}

} // namespace

protocol_spec kernelbench_protocol(const std::string& kb_version, const std::string& precision) {
  check_precision(precision);
  protocol_spec spec;
  if (kb_version == "main") {
    // main's get_tolerance_for_precision: fp32 1e-4, fp16 and bf16 1e-2
    spec.atol = spec.rtol = precision == "fp32" || precision == "tf32" ? 1e-4 : 1e-2;
  } else if (kb_version == "v0.1" || kb_version == "v0") {
    spec.atol = spec.rtol = 1e-2;
  } else {
    throw std::invalid_argument("unknown KernelBench version '" + kb_version +
                                "' (expected main, v0.1 or v0)");
  }
  spec.precision = precision;
  spec.name = "kernelbench-" + kb_version + (precision == "fp32" ? "" : "-" + precision);
  return spec;
}

protocol_spec cuda_agent_protocol(const std::string& precision) {
  check_precision(precision);
  protocol_spec spec;
  spec.name = "cuda-agent" + std::string(precision == "fp32" ? "" : "-" + precision);
  spec.atol = spec.rtol = 1e-2;
  spec.precision = precision;
  spec.weights = "state_dict";
  spec.eval_mode = true;
  spec.clone_inputs = true;
  spec.forbid_functional = true;
  spec.comparison = "assert_close";
  return spec;
}

protocol_spec make_protocol(const std::string& name, const std::string& kb_version,
                            const std::string& precision) {
  if (name == "kernelbench") return kernelbench_protocol(kb_version, precision);
  if (name == "cuda-agent") return cuda_agent_protocol(precision);
  throw std::invalid_argument("unknown protocol '" + name + "' (expected kernelbench or cuda-agent)");
}

} // namespace kj::exec
