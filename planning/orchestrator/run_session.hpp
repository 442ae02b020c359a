// The front door of a run: what `kj run` and `kj agent` both resolve before they judge, in one order and with
// one set of checks: the cache folder, the probe worker's environment (with a warning when candidates run
// without the namespace sandbox), the judging limits against what kj itself needs, the device, the GPUs, the
// stack and the run id.
#pragma once

#include "core/device_kind.hpp"
#include "db/store.hpp"
#include "planning/orchestrator/judging_settings.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::orchestrator {

struct session_request {
  std::string device = "auto";     // --device: auto, cpu or cuda
  std::vector<int> gpus;           // --gpus: empty, every visible GPU
  const judging_settings& judging; // its timeouts and memory limit are checked against kj's own start
  std::filesystem::path cache_dir; // resolved (exec::cache_dir_or_default) and checked (check_cache_dir)
  std::string run_uid;             // --run-id; empty: a new one
  std::string candidates_are;      // who runs in the sandbox, for its warning ("candidates", ...)
};

struct run_session {
  nlohmann::json env; // the probe worker's environment (python, torch, device, kj_boot)
  device_kind device = device_kind::cpu;
  std::vector<int> gpus; // one device slot per GPU (empty on the CPU)
  db::stack_record stack;
  std::string run_uid;
};

// Probes the environment and resolves the rest; throws kb::source_error on bad input (a device or GPU torch
// does not see, --gpus on a CPU run, limits below what kj needs).
run_session open_session(const session_request& request);

// The stack of a run: the worker's environment (torch, CUDA, cuDNN, triton, GPU identity, drivers, nvcc,
// backend flags, allowlisted settings) plus the device and kj's version; its id hashes all of them.
db::stack_record stack_from(nlohmann::json env, device_kind device);

// "auto" becomes cuda when the worker's torch sees a GPU, else cpu; "cuda" without one is a source_error.
device_kind resolve_device(const std::string& requested, const nlohmann::json& env);

// tf32 (TF32 matmuls and convolutions) exists on CUDA only: on the CPU it is a source_error naming
// --precision.
void check_precision_device(precision at, device_kind device);

// The GPUs to use: `requested` when given (each must be visible), else every GPU the probe saw.
std::vector<int> resolve_gpus(const std::vector<int>& requested, const nlohmann::json& env);

// The cache folder (--cache-dir, else KJ_CACHE_DIR or the default: exec::cache_dir_or_default) must be
// writable before any worker starts: kb::source_error (exit code 2) naming it, not a raw filesystem error
// from the first job. Each command's front door checks it.
void check_cache_dir(const std::filesystem::path& cache_dir);

// A new run id: "r<UTC date>-<time>-<4 hex digits>".
std::string new_run_uid();

// Starts a worker that only reports its environment (python, torch, device); throws kb::source_error with
// the worker's output when it cannot start Python or import torch.
nlohmann::json probe_environment(const std::filesystem::path& cache_dir);

} // namespace kj::orchestrator
