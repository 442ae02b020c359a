// The job a worker is given (written by the orchestrator as JSON) and the events it reports back.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj {

// The compatible-verdict protocol: which harness's rules the correctness trials follow.
struct protocol_spec {
  std::string name = "kernelbench-main";
  int trials = 5;
  double atol = 1e-4;
  double rtol = 1e-4;
  std::uint64_t seed = 42;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(protocol_spec, name, trials, atol, rtol, seed)

// Returns the protocol for a KernelBench version ("main", "v0.1", "v0"); throws std::invalid_argument
// otherwise.
protocol_spec kernelbench_protocol(const std::string& kb_version);

struct timing_spec {
  bool enabled = true;
  int warmup_min_calls = 3;
  double warmup_min_ms = 25;
  int min_samples = 10;
  double min_time_ms = 100;
  double max_time_ms = 3000;
  int max_samples = 1000;
  double target_rel_ci = 0.01;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(timing_spec, enabled, warmup_min_calls, warmup_min_ms,
                                                min_samples, min_time_ms, max_time_ms, max_samples,
                                                target_rel_ci)

struct source_file {
  std::string path;
  std::string source;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(source_file, path, source)

// The strict verdict's case classes, in the order they run ("output" and "inputs" summarize the others:
// last).
inline const std::vector<std::string> default_case_classes{"random",      "distribution", "nan",     "inf",
                                                           "denormal",    "extreme",      "negzero", "shape",
                                                           "determinism", "inputs",       "output"};

struct job_spec {
  std::string mode =
      "evaluate"; // "evaluate", "build" (compile only), "describe" (shapes) or "probe" (environment)
  std::string device = "cpu";
  source_file problem;
  source_file candidate;
  std::map<std::string, std::int64_t> overrides;
  protocol_spec protocol;
  timing_spec timing;
  bool strict = true; // run the strict case classes after the compatible trials
  std::vector<std::string> case_classes = default_case_classes;
  std::vector<source_file> problems; // for "describe"
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(job_spec, mode, device, problem, candidate, overrides,
                                                protocol, timing, strict, case_classes, problems)

} // namespace kj
