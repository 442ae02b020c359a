// Implements add_judging_options.
#include "app/cli/judging_flags.hpp"

#include "app/cli/common.hpp"

namespace kj::cli {
namespace {

// The resource limits, the compatible trials' count and draw, and what is timed and checked beside the
// headline timing.
void add_run_checks(CLI::App& cmd, orchestrator::judging_settings& judging) {
  cmd.add_option("--memory-limit", judging.limits.memory_gib,
                 "GiB of resident memory a candidate's process and its children may use before it is killed "
                 "(runtime_error, reason out_of_memory); 0: half the machine's")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd.add_option("--process-limit", judging.limits.processes,
                 "processes a candidate's process may have running, itself included, before it is killed "
                 "(verdict crashed)")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  cmd.add_option(
         "--input-rng", judging.input_rng,
         "where the compatible trials' get_inputs() draws: device (the GPU's generator: KernelBench's "
         "distributions, other values, no GB-sized host draws) or host (KernelBench's CPU generator: "
         "its exact values); the same on the CPU")
      ->check(CLI::IsMember({"device", "host"}))
      ->capture_default_str();
  cmd.add_option("--trials", judging.trials,
                 "compatible trials per candidate (default: the protocol's 5); fewer saves time on large "
                 "problems and is recorded, but is no longer the original protocol")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--rounds", judging.timing.rounds,
                 "robust timing: candidate and reference are timed in this many alternating rounds, so that "
                 "a drift of the machine reaches both (the stopping rule's budget is shared out)")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  cmd.add_flag("!--no-output-check", judging.timing.check_outputs,
               "do not compare the outputs of timed calls with the reference");
  cmd.add_flag("--graphs", judging.timing.graphs,
               "CUDA: also time CUDA-graph replays of candidate and reference");
  cmd.add_flag("!--no-floor", judging.timing.floor, "do not time the empty forward (the harness's floor)");
  cmd.add_flag("!--no-strict", judging.strict,
               "compatible verdict only: skip the strict case classes (adversarial inputs, output and input "
               "checks)");
}

} // namespace

void add_judging_options(CLI::App& cmd, orchestrator::judging_settings& judging, const char* timeout_help) {
  cmd.add_option("--timeout", judging.timeout_s, timeout_help)->check(seconds())->capture_default_str();
  cmd.add_option("--build-timeout", judging.build_timeout_s,
                 "wall-clock limit in seconds for compiling one candidate's extensions")
      ->check(seconds())
      ->capture_default_str();
  add_protocol_option(
      cmd, judging.protocol,
      "rules of the compatible verdict: kernelbench (KernelBench's eval, per --kb-version) or "
      "cuda-agent (weights copied by load_state_dict, eval mode, cloned inputs, assert_close "
      "1e-2, torch.nn.functional forbidden in ModelNew.forward)");
  add_precision_option(cmd, judging.precision,
                       "models and floating inputs are cast to this dtype (KernelBench's precision option; "
                       "tolerance 1e-2 for fp16 and bf16)",
                       {"fp32", "fp16", "bf16"});
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
  add_run_checks(cmd, judging);
}

} // namespace kj::cli
