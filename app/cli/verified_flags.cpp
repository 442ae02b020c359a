// Implements verified_flags: the verified problem set read where results are shown.
#include "app/cli/verified_flags.hpp"

#include "kernelbench/verified.hpp"
#include "planning/orchestrator/verified_problems.hpp"

#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <memory>

namespace kj::cli {

void verified_flags::add_to(CLI::App& app) {
  app.add_option("--problems", problem_set,
                 "all, or verified: only rows of problems the verified set calls sound (docs/verified.md); "
                 "either way rows of KernelBench main are marked with their problem's standing")
      ->check(CLI::IsMember({"all", "verified"}))
      ->capture_default_str();
  app.add_option("--verified-set", file,
                 "the verified problem set's file (default: $KJ_VERIFIED_SET, else the shipped "
                 "kernelbench/verified/kernelbench-main.json)");
}

std::function<void(std::vector<reports::result_row>&)> verified_flags::adjuster() const {
  const std::filesystem::path path = file.empty() ? kb::default_verified_file() : std::filesystem::path(file);
  std::error_code ec;
  const char* env = std::getenv("KJ_VERIFIED_SET");
  const bool named = !file.empty() || (env && *env); // a named set that cannot be read is an error
  if (!named && problem_set == "all" && !std::filesystem::exists(path, ec)) return {};
  auto set = std::make_shared<kb::verified_set>(kb::load_verified_set(path));
  const bool only_sound = problem_set == "verified";
  return [set, only_sound](std::vector<reports::result_row>& rows) {
    orchestrator::mark_verified(rows, *set);
    if (only_sound) orchestrator::keep_verified_rows(rows);
  };
}

} // namespace kj::cli
