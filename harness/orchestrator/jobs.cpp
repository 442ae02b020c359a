// Implements job_runner: one scratch folder per job, removed afterwards unless asked to keep it.
#include "harness/orchestrator/jobs.hpp"

#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kj::orchestrator {

fs::path default_cache_dir() {
  if (const char* env = std::getenv("KJ_CACHE_DIR"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "kerneljudge";
  if (const char* home = std::getenv("HOME"); home && *home) return fs::path(home) / ".cache" / "kerneljudge";
  return fs::temp_directory_path() / "kerneljudge";
}

worker_outcome job_runner::run(const job_spec& job, const std::string& name, std::string* log_tail,
                               const std::function<void(const nlohmann::json&)>& on_event) const {
  const fs::path scratch = cache_dir / "scratch" / fmt::format("{}-{}", name, ::getpid());
  fs::remove_all(scratch);
  fs::create_directories(scratch);
  fs::create_directories(cache_dir / "torch_extensions");
  worker_launch launch;
  launch.job_file = scratch / "job.json";
  launch.log_file = scratch / "worker.log";
  launch.timeout = timeout;
  // Compiled extensions and Inductor's code and autotuning results persist in the cache folder, so a
  // baseline compiled once (kj baselines' parallel pass) is found warm by the worker that times it.
  const char* inductor_cache = std::getenv("TORCHINDUCTOR_CACHE_DIR");
  // Problems that load Hugging Face models (KernelBench level 4) use what is on disk, never the network
  // (a run must not depend on a download, and an offline machine would wait on connection timeouts); the
  // user's own HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE win.
  const auto env_or = [](const char* variable, const char* fallback) {
    const char* value = std::getenv(variable);
    return std::string(value && *value ? value : fallback);
  };
  launch.environment = {
      {"TORCH_EXTENSIONS_DIR", (cache_dir / "torch_extensions").string()},
      {"TORCHINDUCTOR_CACHE_DIR",
       inductor_cache && *inductor_cache ? inductor_cache : (cache_dir / "inductor").string()},
      {"KJ_SCRATCH_DIR", scratch.string()},
      {"HF_HUB_OFFLINE", env_or("HF_HUB_OFFLINE", "1")},
      {"TRANSFORMERS_OFFLINE", env_or("TRANSFORMERS_OFFLINE", "1")},
      {"PYTHONUNBUFFERED", "1"},
      {"PYTHONDONTWRITEBYTECODE", "1"},
  };
  {
    std::ofstream out(launch.job_file);
    out << nlohmann::json(job).dump();
  }
  worker_outcome outcome = run_worker_process(launch, on_event);
  if (log_tail) *log_tail = file_tail(launch.log_file);
  std::error_code ec;
  if (!keep_scratch) fs::remove_all(scratch, ec);
  return outcome;
}

const nlohmann::json* find_event(const worker_outcome& outcome, const std::string& type) {
  for (const auto& event : outcome.events)
    if (event.value("type", "") == type) return &event;
  return nullptr;
}

} // namespace kj::orchestrator
