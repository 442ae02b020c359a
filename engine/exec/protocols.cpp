// The compatible-verdict protocols (REFERENCE §3, §4): KernelBench per version and precision, and CUDA
// Agent's.
#include "engine/exec/messages.hpp"

#include <stdexcept>

namespace kj::exec {
namespace {

// A protocol's name: its kind, then the precision unless fp32 (kernelbench-main-bf16, cuda-agent-tf32).
std::string protocol_suffix(precision at) {
  return at == precision::fp32 ? "" : "-" + name_of(at);
}

} // namespace

// tf32 is fp32 tensors with TF32 matmuls and convolutions (kj baselines and kj audit: the numerics a
// candidate that turns TF32 on computes at); its tolerance is fp32's.
protocol_spec kernelbench_protocol(const std::string& kb_version, precision at) {
  protocol_spec spec;
  if (kb_version == "main") {
    // main's get_tolerance_for_precision: fp32 1e-4, fp16 and bf16 1e-2
    spec.atol = spec.rtol = is_fp32_storage(at) ? 1e-4 : 1e-2;
  } else if (kb_version == "v0.1" || kb_version == "v0") {
    spec.atol = spec.rtol = 1e-2;
  } else {
    throw std::invalid_argument("unknown KernelBench version '" + kb_version +
                                "' (expected main, v0.1 or v0)");
  }
  spec.precision = at;
  spec.name = "kernelbench-" + kb_version + protocol_suffix(at);
  return spec;
}

protocol_spec cuda_agent_protocol(precision at) {
  protocol_spec spec;
  spec.name = "cuda-agent" + protocol_suffix(at);
  spec.atol = spec.rtol = 1e-2;
  spec.precision = at;
  spec.weights = "state_dict";
  spec.eval_mode = true;
  spec.clone_inputs = true;
  spec.forbid_functional = true;
  spec.comparison = "assert_close";
  return spec;
}

protocol_spec make_protocol(protocol_kind kind, const std::string& kb_version, precision at) {
  return kind == protocol_kind::cuda_agent ? cuda_agent_protocol(at) : kernelbench_protocol(kb_version, at);
}

} // namespace kj::exec
