// `kj import`: a published set of kernels as a folder kj runs (adapters/published/cuda_l1.hpp).
#include "adapters/published/cuda_l1.hpp"
#include "app/cli/commands.hpp"
#include "kernelbench/problems.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <string>

namespace kj::cli {

namespace {

void print_summary(const nlohmann::json& claims, const std::filesystem::path& out) {
  const auto& counts = claims["counts"];
  const auto count = [&](const char* key) { return counts.value(key, 0); };
  fmt::print("kj: imported {} rows of {} ({} GPU): {} kernels, {} rows without one (recorded as missing)\n",
             count("rows"), claims.value("source", ""), claims.value("gpu", ""), count("kernels"),
             count("missing"));
  if (!claims["kernelbench"].is_null())
    fmt::print(
        "kj: references against KernelBench {}: {} identical, {} differ (kept as given), {} not in it\n",
        claims["kernelbench"].value("commit", std::string()).empty()
            ? claims["kernelbench"].value("path", std::string()) + " (not a git checkout)"
            : claims["kernelbench"].value("commit", std::string()),
        count("identical"), count("differs"), count("not in KernelBench"));
  fmt::print(
      "kj: wrote {}/KernelBench (the references), {}/candidates (the kernels) and {}/claims.json\n"
      "kj: judge them with\n"
      "  kj run --kernelbench {}/KernelBench --candidates {}/candidates --producer cuda-l1 --run-id cuda-l1 "
      "[--kb-version v0]\n"
      "kj: and put claim beside measurement with\n"
      "  kj claims {}/claims.json --run cuda-l1\n",
      out.string(), out.string(), out.string(), out.string(), out.string(), out.string());
}

} // namespace

action add_import_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import", "Import a published set of kernels (CUDA-L1's per-GPU release file) as a folder kj runs: the "
                "references as a KernelBench tree, the kernels as candidate files, the claimed speedups in "
                "claims.json");
  auto o = std::make_shared<adapters::import_options>();
  auto format = std::make_shared<std::string>("cuda-l1");
  cmd->add_option("format", *format, "the release's format: cuda-l1")
      ->required()
      ->check(CLI::IsMember({"cuda-l1"}));
  cmd->add_option("file", o->release,
                  "the release file: CUDA-L1's optimized_cuda_code/<gpu>.json, one JSON object per line")
      ->required();
  cmd->add_option("--out", o->out, "the folder to write (new or empty)")->required();
  cmd->add_option(
      "--kernelbench", o->kernelbench,
      "a KernelBench checkout (default: $KERNELBENCH_DIR when set): each reference identical to its "
      "problem of the same level and id takes that problem's name; one that differs is kept as given "
      "and marked");
  cmd->add_option("--gpu", o->gpu,
                  "the GPU the claims were measured on (default: the file's name, e.g. h100)");
  return [o, format] { // the option writes into *format: it lives as long as the action
    if (const char* env = std::getenv("KERNELBENCH_DIR"); o->kernelbench.empty() && env && *env)
      o->kernelbench = env; // the default of every --kernelbench
    try {
      print_summary(adapters::import_cuda_l1(*o), o->out);
      return 0;
    } catch (const adapters::import_error& e) {
      fmt::print(stderr, "kj import: {}\n", e.what());
    } catch (const kb::source_error& e) {
      fmt::print(stderr, "kj import: --kernelbench: {}\n", e.what());
    }
    return 2;
  };
}

} // namespace kj::cli
