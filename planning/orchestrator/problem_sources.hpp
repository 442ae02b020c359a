// Every problem source, including those that need the worker's Python to read (CUDA-Agent-Ops-6K's parquet).
#pragma once

#include "kernelbench/problems.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace kj::orchestrator {

// The suite name of CUDA-Agent-Ops-6K's problems.
inline constexpr const char* ops6k_suite = "cuda-agent-ops-6k";

// kb::load_problems for the file-based sources, plus, when options.ops6k_path is set, the rows of that
// parquet file read by a worker (`cache_dir` holds its scratch folder): suite "cuda-agent-ops-6k", level 0,
// number = row number (1-based; --ids selects rows), name from the `name` column or the `ops` joined by '_'.
// --level does not apply to those rows. Sorted by suite, level, number. Throws kb::source_error naming the
// file on a missing file, a Python without pyarrow, a file that is not parquet or lacks the `code` column,
// and when the selection matches nothing; std::runtime_error when the worker cannot start Python.
std::vector<kb::problem> load_all_problems(const kb::source_options& options,
                                           const std::filesystem::path& cache_dir);

// A problem name from a row: `name` when given and not empty, else the operators joined by '_'; characters
// other than [A-Za-z0-9_] become '_', runs of '_' collapse, at most 60 characters; "row" when nothing is
// left.
std::string ops6k_problem_name(const std::vector<std::string>& ops,
                               const std::optional<std::string>& name = {});

} // namespace kj::orchestrator
