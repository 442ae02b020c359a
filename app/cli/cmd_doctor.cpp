// `kj doctor`: is this machine ready to judge? Python with torch, the device, the sandbox, the compilers
// candidates need, the cache folder and free disk, each with what to do when it is not.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "core/version.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/sandbox.hpp"
#include "planning/orchestrator/run.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::cli {
namespace {

struct findings {
  int failed = 0, warned = 0;
  void line(const char* status, const std::string& check, const std::string& detail) {
    failed += std::string_view(status) == "FAIL";
    warned += std::string_view(status) == "warn";
    fmt::print("{:<5} {:<22} {}\n", status, check, detail);
  }
};

// The first of `names` found as an executable on PATH, or "".
std::string on_path(std::initializer_list<const char*> names) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (const char* name : names)
    for (std::size_t at = 0; at <= dirs.size();) {
      const std::size_t end = std::min(dirs.find(':', at), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(at, end - at)) / name;
      std::error_code ec;
      if (end > at && fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
        return candidate.string();
      at = end + 1;
    }
  return "";
}

void check_disk(findings& f, const std::string& what, const fs::path& path) {
  std::error_code ec;
  fs::path at = fs::absolute(path, ec).lexically_normal();
  if (at.filename().empty()) at = at.parent_path();
  while (!at.empty() && !fs::exists(at, ec))
    at = at.parent_path();
  const auto space = fs::space(at, ec);
  if (ec)
    return f.line("warn", what,
                  fmt::format("{}: cannot tell the free space ({})", at.string(), ec.message()));
  const double gib = static_cast<double>(space.available) / double(1ull << 30);
  f.line(gib < 5 ? "warn" : "ok", what,
         fmt::format("{:.1f} GiB free at {}{}", gib, at.string(),
                     gib < 5 ? " (builds take about 50 MB per compiled candidate, a CUDA one more: free some)"
                             : ""));
}

} // namespace

action add_doctor_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("doctor", "Check that this machine can judge: Python and torch, the GPU, the "
                                   "sandbox, compilers, cache and disk (exit 1 when a check fails)");
  struct state {
    std::string cache_dir, db = default_db_path();
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--cache-dir", s->cache_dir,
                  "cache folder to check (default: $KJ_CACHE_DIR or ~/.cache/kerneljudge)");
  cmd->add_option("--db", s->db, "database whose folder to check")->capture_default_str();
  return [s] {
    findings f;
    fmt::print("kj {}\n", version_string());
    const fs::path cache = exec::cache_dir_or_default(s->cache_dir);
    bool cache_ok = false;
    try {
      orchestrator::check_cache_dir(cache);
      f.line("ok", "cache folder", cache.string() + " is writable");
      cache_ok = true;
    } catch (const std::exception& e) {
      f.line("FAIL", "cache folder", e.what());
    }
    json env = json::object();
    try {
      check_python_override();
      if (!cache_ok) throw std::runtime_error("not checked: kj's worker needs the cache folder above");
      env = orchestrator::probe_environment(cache);
      f.line("ok", "python and torch",
             fmt::format("python {} with torch {} ({})", env.value("python", "?"), env.value("torch", "?"),
                         std::getenv("KJ_PYTHON") ? "KJ_PYTHON" : "the python kj was built with"));
    } catch (const std::exception& e) {
      f.line("FAIL", "python and torch", e.what());
    }
    if (!env.is_object()) env = json::object();
    const bool cuda = env.value("cuda_available", false);
    if (!env.contains("torch")) // torch was never asked: nothing to say of the GPU
      f.line("warn", "GPU", "not checked: kj's worker could not start Python and torch (above)");
    else
      f.line(cuda ? "ok" : "warn", "GPU",
             cuda ? fmt::format("{} (CUDA {}), {} visible", env.value("device_name", "?"),
                                env.value("torch_cuda", std::string("?")), env.value("device_count", 0))
                  : "torch sees no GPU: runs use the CPU (a CUDA machine needs torch built for CUDA and "
                    "the NVIDIA driver; check nvidia-smi and torch.cuda.is_available())");
    const std::string sandbox = exec::sandbox_kind();
    f.line(sandbox == "bwrap" ? "ok" : "warn", "sandbox",
           sandbox == "bwrap"
               ? fmt::format("bubblewrap: candidates run without network and see only their folder; {}; "
                             "identity: {}",
                             exec::sandbox_pid_namespace()
                                 ? "a PID namespace of their own (no process of kj's visible)"
                                 : "no PID namespace here (seccomp keeps them from other processes)",
                             exec::identity_kind(true))
               : sandbox.substr(6) + " (install bubblewrap and allow unprivileged user "
                                     "namespaces, or accept KJ_SANDBOX=none: docs/security.md)");
    const std::string cxx = on_path({"c++", "g++", "clang++"});
    f.line(cxx.empty() ? "FAIL" : "ok", "C++ compiler",
           cxx.empty() ? "none on PATH: candidates with C++ extensions cannot build (apt install g++)" : cxx);
    const std::string ninja = on_path({"ninja"});
    f.line(ninja.empty() ? "warn" : "ok", "ninja",
           ninja.empty()
               ? "not on PATH: torch's load_inline needs it (apt install ninja-build, or pip install ninja)"
               : ninja);
    if (cuda) {
      const std::string nvcc = on_path({"nvcc"});
      f.line(nvcc.empty() ? "warn" : "ok", "nvcc",
             nvcc.empty() ? "not on PATH: CUDA candidates cannot build (install the CUDA toolkit, or set "
                            "CUDA_HOME and add its bin to PATH)"
                          : nvcc);
    }
    check_disk(f, "disk (cache)", cache);
    const fs::path db_folder =
        fs::path(s->db).parent_path().empty() ? fs::path(".") : fs::path(s->db).parent_path();
    if (std::error_code ec; !fs::is_directory(db_folder, ec)) // kj run refuses it: so does the doctor
      f.line("FAIL", "database",
             fmt::format("{}: its folder {} does not exist (make it, or pass another --db)", s->db,
                         db_folder.string()));
    else
      check_disk(f, "disk (database)", db_folder);
    fmt::print("\n{} failed, {} to look at{}\n", f.failed, f.warned,
               f.failed ? ""
               : cuda
                   ? ": kj can judge here (a first look in seconds: kj run --level 1 --ids 2 "
                     "--candidates builtin:identity --quick)"
                   : ": kj can judge here (a first look in about 10 s: kj run --device cpu --level 1 --ids 2 "
                     "--candidates builtin:identity --quick)");
    return f.failed ? 1 : 0;
  };
}

} // namespace kj::cli
