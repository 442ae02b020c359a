// The messages of the execution layer: the typed jobs a worker is given and the specs they carry.
#pragma once

#include "core/device_kind.hpp"
#include "core/precision.hpp"
#include "core/protocol.hpp"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace kj {

// A device kind on the wire is its name; any other value is refused, naming what was expected.
inline void to_json(nlohmann::json& j, device_kind d) {
  j = to_string(d);
}
inline void from_json(const nlohmann::json& j, device_kind& d) {
  const auto parsed = j.is_string() ? parse_device_kind(j.get<std::string>()) : std::nullopt;
  if (!parsed) throw std::invalid_argument("device: expected \"cpu\" or \"cuda\", got " + j.dump());
  d = *parsed;
}

// A precision on the wire is its name, likewise.
inline void to_json(nlohmann::json& j, precision p) {
  j = name_of(p);
}
inline void from_json(const nlohmann::json& j, precision& p) {
  const auto parsed = j.is_string() ? parse_precision(j.get<std::string>()) : std::nullopt;
  if (!parsed) throw std::invalid_argument("precision: expected fp32, tf32, fp16 or bf16, got " + j.dump());
  p = *parsed;
}

} // namespace kj

namespace kj::exec {

// The compatible-verdict protocol: which harness's rules the correctness trials follow (REFERENCE §3, §4).
// The worker reads the fields, not the name, so a protocol is exactly what is stored here.
struct protocol_spec {
  std::string name = "kernelbench-main";
  int trials = 5;
  double atol = 1e-4;
  double rtol = 1e-4;
  std::uint64_t seed = 42;
  kj::precision precision = kj::precision::fp32; // inputs cast to it (tf32: fp32 with TF32 on)
  std::string weights = "seed";   // "seed": both models built after manual_seed; "state_dict": copied, strict
  bool eval_mode = false;         // .eval() both models (KernelBench leaves them in train mode)
  bool clone_inputs = false;      // each model gets its own clone of the trial's inputs
  bool forbid_functional = false; // torch.nn.functional raises inside ModelNew.forward during the trials
  std::string comparison = "allclose"; // "allclose" (KernelBench) or "assert_close" (also checks dtype)
  // Where the compatible trials' get_inputs() draws: "device" (the GPU's generator: same distributions,
  // other values, no host copy) or "host" (KernelBench's CPU generator: its exact values). Same on the CPU.
  std::string input_rng = "device";
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(protocol_spec, name, trials, atol, rtol, seed, precision,
                                                weights, eval_mode, clone_inputs, forbid_functional,
                                                comparison, input_rng)

// Returns the protocol for a KernelBench version ("main", "v0.1", "v0") at a precision; throws
// std::invalid_argument for another version.
protocol_spec kernelbench_protocol(const std::string& kb_version, precision at = precision::fp32);

// CUDA Agent's released verification: weights copied with a strict load_state_dict, .eval(), cloned inputs,
// 5 checks, assert_close(atol=rtol=1e-2), torch.nn.functional forbidden in ModelNew.forward.
protocol_spec cuda_agent_protocol(precision at = precision::fp32);

// KernelBench's (rules of `kb_version`) or CUDA Agent's.
protocol_spec make_protocol(protocol_kind kind, const std::string& kb_version,
                            precision at = precision::fp32);

// How subjects are timed (docs/methodology.md). Every field is stored with each timing row.
struct timing_spec {
  bool enabled = true;
  // "robust": flush, events, device sync, adaptive stopping, median (the default). "kernelbench": KernelBench
  // main's cuda_event protocol, mean. "cuda-agent": summed CUPTI kernel time per call over 10 calls after 5
  // warmups, no flush, mean.
  std::string method = "robust";
  int warmup_min_calls = 3;
  double warmup_min_ms = 25;
  int min_samples = 10;
  double min_time_ms = 100;
  double max_time_ms = 3000;
  int max_samples = 1000;
  double target_rel_ci = 0.005; // stop when the 95% CI of the median is within ±0.5% of it
  int rounds =
      3; // robust: candidate and reference are timed in this many alternating rounds (drift hits both)
  bool check_outputs = true; // the outputs of timed calls are compared with the reference afterwards
  bool graphs = false;       // CUDA: also time CUDA-graph replays of each forward, when capturable
  bool floor = true;         // also time an empty forward (the harness's floor) with the same method
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(timing_spec, enabled, method, warmup_min_calls, warmup_min_ms,
                                                min_samples, min_time_ms, max_time_ms, max_samples,
                                                target_rel_ci, rounds, check_outputs, graphs, floor)

struct source_file {
  std::string path;
  std::string source;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(source_file, path, source)

// What a candidate's process (the runner and everything it starts) may use before it is killed: resident
// memory (0: half the machine's) and processes. Breaking one is the verdict `oom` or `crashed`.
struct resource_limits {
  double memory_gib = 0;
  int processes = 256;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(resource_limits, memory_gib, processes)

// The strict verdict's case classes, in the order they run ("output" and "inputs" summarize the others:
// last).
inline const std::vector<std::string> default_case_classes{"random",      "distribution", "nan",     "inf",
                                                           "denormal",    "extreme",      "negzero", "shape",
                                                           "determinism", "inputs",       "output"};

// The jobs a worker can be given. Each is a message of its own type; on the wire it is JSON with a "kind" tag
// (to_json / job_from_json). How a job is launched (time limit, build folder, device) is not part of it: see
// engine/exec/job_runner.hpp.

// The evaluation of one candidate against one problem: compatible trials, strict cases, timing.
struct evaluate_job {
  device_kind device = device_kind::cpu;
  source_file problem;
  source_file candidate;
  std::map<std::string, std::int64_t> overrides;
  protocol_spec protocol;
  timing_spec timing;
  bool strict = true; // run the strict case classes after the compatible trials
  std::vector<std::string> case_classes = default_case_classes;
  double timeout_s = 600; // the job's limit: the judge stops waiting for the candidate a little before it
  resource_limits limits;
  // The build step could not import the candidate without the GPU: the runner imports it with the GPU and may
  // compile its extensions into the build folder (writable for it), as KernelBench's own eval would.
  bool import_on_device = false;
  // The candidate's built extensions (a judge serving several jobs, `kj worker --serve`, is told per job);
  // empty: the worker's TORCH_EXTENSIONS_DIR.
  std::string extensions_dir;
  // Whether the slot may get another evaluation after this one (the scheduler's view when it hands the job
  // out): only then does the serving judge start the next runner ahead. The last one would be started, import
  // torch beside the candidate's timing, and be killed unused.
  bool more_jobs = true;
};

// Compile only: import the problem and the candidate so that torch.utils.cpp_extension builds the
// candidate's extensions into the build folder the job is launched with.
struct build_job {
  source_file problem;
  source_file candidate;
  std::map<std::string, std::int64_t> overrides;
  device_kind device =
      device_kind::cpu; // the run's: on cuda an import that fails without the GPU is deferred
};

// One problem of a baseline job and the modes to run on it (eager, compile-default, max-autotune,
// max-autotune-no-cudagraphs, reduce-overhead).
struct baseline_item {
  source_file problem;
  std::vector<std::string> modes;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(baseline_item, problem, modes)

// Baselines: each problem's own Model under each of its modes, timed like a candidate, or only compiled
// (compile_only) to warm Inductor's disk cache. Events name the item by its index ("problem").
struct baseline_job {
  device_kind device = device_kind::cpu;
  std::vector<baseline_item> items;
  std::map<std::string, std::int64_t> overrides;
  protocol_spec protocol;
  timing_spec timing;
  bool compile_only = false;
};

// The input shapes and dtypes of problems (drawn on the meta device).
struct describe_job {
  std::vector<source_file> problems;
  std::map<std::string, std::int64_t> overrides;
  bool cost = false; // also the bytes a forward moves and its FLOPs (meta device; the agent's speed of light)
};

// The worker's environment only (python, torch, device): the stack fingerprint.
struct probe_job {};

// The rows of a CUDA-Agent-Ops-6K parquet file (1-based row numbers; empty: every row).
struct read_parquet_job {
  std::string path;
  std::vector<int> rows;
};

// kj's precompiled torch/extension.h for CPU extension builds (engine/exec/precompiled_header.hpp), made in
// `folder` once per list of extra_cflags in `variants`: kj's own compiler runs, no candidate code.
struct precompile_job {
  std::string folder;
  std::vector<std::vector<std::string>> variants;
};

// One problem of an audit job, with its own size overrides (the built-in suite's CPU sizes).
struct audit_item {
  source_file problem;
  std::map<std::string, std::int64_t> overrides;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(audit_item, problem, overrides)

// The problem-set audit (kj audit): null candidates judged by both rules, the reference run under two RNG
// states, with no candidate and no runner. One "audit" event per item, by index.
struct audit_job {
  device_kind device = device_kind::cpu;
  std::vector<audit_item> items;
  protocol_spec protocol;
};

using job = std::variant<evaluate_job, build_job, baseline_job, describe_job, probe_job, read_parquet_job,
                         audit_job, precompile_job>;

// "evaluate", "build", "baseline", "describe", "probe", "read_parquet", "audit" or "precompile".
std::string kind_of(const job& message);
// {"kind": ..., fields...}
nlohmann::json to_json(const job& message);
// Throws std::invalid_argument naming the kind or field that is missing or malformed.
job job_from_json(const nlohmann::json& message);

} // namespace kj::exec
