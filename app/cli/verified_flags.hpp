// --problems and --verified-set for commands that read results (kj results, kj report): the verified problem
// set's marks on every row of KernelBench main, and with --problems verified only its sound problems.
#pragma once

#include "reports/metrics.hpp"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace kj::cli {

struct verified_flags {
  std::string problem_set = "all";
  std::string file; // empty: kb::default_verified_file(), when it exists

  void add_to(CLI::App& app);
  // Marks rows with their problem's standing and drops the unsound ones under --problems verified; reads the
  // set once. A named file that cannot be read, or --problems verified without a set, is a kb::source_error.
  std::function<void(std::vector<reports::result_row>&)> adjuster() const;
};

} // namespace kj::cli
