// Implements kj's precompiled torch/extension.h: its folder, its lock, its precompile job.
#include "engine/exec/precompiled_header.hpp"

#include "engine/exec/file_lock.hpp"

#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::exec {
namespace {

void write_text(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.string() + ".tmp";
  std::ofstream(tmp) << text;
  fs::rename(tmp, file);
}

} // namespace

precompiled_header::precompiled_header(const fs::path& root, const std::string& stack_key)
    : m_folder(root / stack_key) {}

const std::vector<std::vector<std::string>>& precompiled_header::variants() {
  static const std::vector<std::vector<std::string>> v{{"-O3"}, {}};
  return v;
}

bool precompiled_header::ready() const {
  std::error_code ec;
  return fs::exists(m_folder / "ready", ec);
}

std::string precompiled_header::make(const job_runner& runner) const {
  std::error_code ec;
  fs::create_directories(m_folder.parent_path(), ec);
  if (ec) return fmt::format("cannot make {}: {}", m_folder.parent_path().string(), ec.message());
  std::optional<file_lock> lock;
  try {
    lock.emplace(m_folder.string() + ".lock");
  } catch (const std::runtime_error& e) { // Ctrl-C while another kj process makes it, or no lock to be had
    return e.what();
  }
  if (ready()) return "";
  if (fs::exists(m_folder / "failed"))
    return "the compiler refused it before for this stack (" + (m_folder / "failed").string() +
           "; remove that file to try again)";
  fs::remove_all(m_folder); // what an interrupted attempt left
  fs::create_directories(m_folder);
  launch_spec launch{.name = "precompile", .timeout = std::chrono::minutes(20)};
  launch.nice = 10;
  launch.quiet_while_timing = true; // stands still while a device slot times, as builds do
  std::string tail;
  const worker_outcome outcome = runner.run(precompile_job{m_folder.string(), variants()}, launch, &tail);
  const json* verdict = find_event(outcome, "verdict");
  std::string why;
  if (!verdict)
    why = fmt::format("the precompile job ended without a result ({}): {}", describe_exit(outcome), tail);
  else if (verdict->value("verdict", "") != "ok")
    why = verdict->value("error", "");
  else if (verdict->value("used", json::array()).empty())
    why = "the compiler took none of them: " + verdict->value("errors", json::array()).dump();
  if (!why.empty()) {
    // Remembered only when the job answered (the compiler refused the header: it would again for this
    // stack); a job killed, timed out or cut by Ctrl-C says nothing, and the next run tries again.
    if (verdict && !interrupt_requested()) write_text(m_folder / "failed", why);
    return why;
  }
  write_text(m_folder / "ready", verdict->dump());
  return "";
}

fs::path precompiled_header_root(const fs::path& cache_dir) {
  if (const char* dir = std::getenv("KJ_PCH_DIR"); dir && *dir) return fs::absolute(dir);
  return cache_dir / "pch";
}

} // namespace kj::exec
