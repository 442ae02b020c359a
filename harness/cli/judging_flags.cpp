// Implements add_judging_options.
#include "harness/cli/judging_flags.hpp"

#include "harness/cli/common.hpp"

namespace kj::cli {

void add_judging_options(CLI::App& cmd, orchestrator::judging_settings& judging, const char* timeout_help) {
  cmd.add_option("--timeout", judging.timeout_s, timeout_help)->check(seconds())->capture_default_str();
  cmd.add_option("--build-timeout", judging.build_timeout_s,
                 "wall-clock limit in seconds for compiling one candidate's extensions")
      ->check(seconds())
      ->capture_default_str();
  cmd.add_option("--protocol", judging.protocol,
                 "rules of the compatible verdict: kernelbench (KernelBench's eval, per --kb-version) or "
                 "cuda-agent (weights copied by load_state_dict, eval mode, cloned inputs, assert_close "
                 "1e-2, torch.nn.functional forbidden in ModelNew.forward)")
      ->check(CLI::IsMember({"kernelbench", "cuda-agent"}))
      ->capture_default_str();
  cmd.add_option("--precision", judging.precision,
                 "models and floating inputs are cast to this dtype (KernelBench's precision option; "
                 "tolerance 1e-2 for fp16 and bf16)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  cmd.add_option("--library-policy", judging.trace.library_policy,
                 "GPU: what library kernels in the candidate's kernel trace mean for the strict verdict: "
                 "report (share recorded only), forbid-torch (fail above --max-library-share of kernel time "
                 "in PyTorch's own kernels: aten, inductor) or forbid-all (any library: also cuBLAS, cuDNN, "
                 "CUTLASS, ...)")
      ->check(CLI::IsMember({"report", "forbid-torch", "forbid-all"}))
      ->capture_default_str();
  cmd.add_option("--max-library-share", judging.trace.max_library_share,
                 "the share of kernel time --library-policy allows in forbidden kernels")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  add_timing_options(cmd, judging.timing);
}

} // namespace kj::cli
