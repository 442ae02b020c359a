// How candidates are judged: the settings `kj run`, evaluate() (the agent's tools) and `kj agent` share,
// filled once by the command line (app/cli/judging_flags.cpp) and carried whole; evaluation_context adds
// what a run resolves (the device, the probed environment, the build cache).
#pragma once

#include "core/precision.hpp"
#include "core/protocol.hpp"
#include "engine/exec/messages.hpp"
#include "planning/orchestrator/judgement.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace kj::orchestrator {

struct judging_settings {
  // The compatible verdict's rules: KernelBench's (those of the problem's KernelBench version) or CUDA
  // Agent's.
  kj::protocol_kind protocol = kj::protocol_kind::kernelbench;
  kj::precision precision = kj::precision::fp32;
  std::string input_rng = "device"; // where the compatible trials draw: device or host (exec::protocol_spec)
  int trials = 0;                   // compatible trials; 0: the protocol's own count (5)
  exec::timing_spec timing;
  bool strict = true; // the strict verdict's case classes alongside the compatible trials
  std::map<std::string, std::int64_t> overrides; // the user's --set
  trace_policy trace;                            // what the strict verdict makes of the kernel trace
  double timeout_s = 600;                        // a judging job
  double build_timeout_s = 600;                  // a candidate's build
  exec::resource_limits limits;                  // of a candidate's process: memory, processes
};

} // namespace kj::orchestrator
