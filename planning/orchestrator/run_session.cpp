// Implements the front door of a run (run_session.hpp).
#include "planning/orchestrator/run_session.hpp"

#include "core/hashing.hpp"
#include "core/version.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/sandbox.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/run_setup.hpp"

#include <chrono>
#include <ctime>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <fstream>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {

run_session open_session(const session_request& request) {
  fmt::print(stderr, "kj: starting a worker to probe Python, torch and the device...\n");
  if (const std::string sandbox = exec::sandbox_kind(); sandbox != "bwrap")
    fmt::print(stderr,
               "kj: warning: {} run without a filesystem and network sandbox ({}); see docs/security.md\n",
               request.candidates_are, sandbox.substr(6));
  run_session s;
  s.env = probe_environment(request.cache_dir);
  refuse_limits_below_kj(request.judging, s.env);
  s.device = resolve_device(request.device, s.env);
  if (s.device != device_kind::cuda && !request.gpus.empty())
    throw kb::source_error(fmt::format("--gpus {}: the run is on the CPU ({}); --gpus picks CUDA devices",
                                       fmt::join(request.gpus, ","),
                                       request.device == "cpu" ? "--device cpu" : "torch sees no GPU"));
  if (s.device == device_kind::cuda) s.gpus = resolve_gpus(request.gpus, s.env);
  s.stack = stack_from(s.env, s.device);
  s.run_uid = request.run_uid.empty() ? new_run_uid() : request.run_uid;
  return s;
}

std::string new_run_uid() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return fmt::format("r{}-{:04x}", stamp, rd() & 0xffff);
}

void check_cache_dir(const fs::path& cache_dir) {
  std::error_code ec;
  fs::create_directories(cache_dir / "scratch", ec);
  bool writable = false;
  if (!ec) {
    const fs::path probe = cache_dir / "scratch" / fmt::format(".kj-write-test-{}", ::getpid());
    writable = static_cast<bool>(std::ofstream(probe));
    fs::remove(probe, ec);
  }
  if (!writable)
    throw kb::source_error(fmt::format("cache folder {} is not writable ({}): pass --cache-dir or set "
                                       "KJ_CACHE_DIR to a writable folder",
                                       cache_dir.string(), ec ? ec.message() : "cannot create files in it"));
}

db::stack_record stack_from(json env, device_kind device) {
  db::stack_record stack;
  stack.python = env.value("python", "");
  stack.torch = env.value("torch", "");
  stack.device_name = device == device_kind::cuda ? env.value("device_name", "")
                                                  : "cpu: " + env.value("cpu", env.value("device_name", ""));
  env.erase("kj_boot"); // how kj's own start went on this machine today: no part of the stack
  env["device"] = to_string(device);
  env["kj_version"] = version_string();
  // Identity: everything the worker reported except what describes the moment rather than the stack (the
  // number of visible devices) and fields that only exist on the other device.
  json identity = env;
  identity.erase("device_count");
  identity.erase("python_paths"); // where the venv lies is not part of the stack
  identity.erase("cuda_available");
  if (device == device_kind::cpu)
    for (const char* gpu_only : {"gpu_uuid", "sm_count", "compute_capability", "gpu_memory_bytes", "l2_bytes",
                                 "cuda_driver", "nvidia_driver", "nvcc", "cudnn"})
      identity.erase(gpu_only);
  stack.fingerprint_json = env.dump();
  stack.stack_hash = core::sha256_hex(identity.dump()).substr(0, 16);
  return stack;
}

device_kind resolve_device(const std::string& requested, const json& env) {
  const bool has_cuda = env.value("cuda_available", false);
  if (requested == "auto") return has_cuda ? device_kind::cuda : device_kind::cpu;
  const auto device = parse_device_kind(requested);
  if (!device) throw kb::source_error("--device " + requested + ": expected auto, cpu or cuda");
  if (*device == device_kind::cuda && !has_cuda)
    throw kb::source_error("--device cuda: torch in the embedded Python sees no CUDA device "
                           "(torch " +
                           env.value("torch", "?") + ", CUDA " + env.value("torch_cuda", "none") + ")");
  return *device;
}

void check_precision_device(precision at, device_kind device) {
  if (at == precision::tf32 && device != device_kind::cuda)
    throw kb::source_error(
        "--precision tf32: TF32 matmuls and convolutions exist on CUDA only (this run is on "
        "the " +
        to_string(device) + "); use --device cuda, or fp32");
}

std::vector<int> resolve_gpus(const std::vector<int>& requested, const json& env) {
  const int visible = env.value("device_count", 0);
  // Two slots on one GPU would time two candidates on it at once.
  for (std::size_t i = 0; i < requested.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (requested[i] == requested[j])
        throw kb::source_error(
            fmt::format("--gpus: GPU {} is listed twice (one slot per GPU)", requested[i]));
  for (int g : requested)
    if (g < 0 || g >= visible)
      throw kb::source_error(
          fmt::format("--gpus: GPU {} is not visible (torch sees {} GPU(s): 0-{})", g, visible, visible - 1));
  if (!requested.empty()) return requested;
  std::vector<int> all;
  for (int g = 0; g < std::max(visible, 1); ++g)
    all.push_back(g);
  return all;
}

json probe_environment(const fs::path& cache_dir) {
  const exec::job_runner runner{cache_dir, false};
  std::string tail;
  const exec::worker_outcome outcome =
      runner.run(exec::probe_job{}, {.name = "probe", .timeout = std::chrono::milliseconds(300'000)}, &tail);
  const json* hello = exec::find_event(outcome, "hello");
  if (!hello) {
    const json* verdict = exec::find_event(outcome, "verdict");
    // Not the user's data, but their setup: exit code 2 with what to change.
    throw kb::source_error(fmt::format("the worker could not start Python with torch ({}): {}\n{}\nkj embeds "
                                       "the python3 named by KJ_PYTHON, "
                                       "else the one it was built with: point KJ_PYTHON at a python3 that "
                                       "imports torch (scripts/setup picks one)",
                                       exec::describe_exit(outcome),
                                       verdict ? verdict->value("error", "") : "", tail));
  }
  json env = (*hello)["environment"];
  env["kj_boot"]["seconds"] = outcome.wall_s; // the probe's whole life: start, import torch, fingerprint
  return env;
}

} // namespace kj::orchestrator
