// Import adapters: candidates from a directory of KernelBench-style files and CUDA-Agent workdirs, and the
// built-in `identity` producer.
#pragma once

#include "kernelbench/problems.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace kj::adapters {

struct candidate {
  std::size_t problem_index = 0; // into the problem list it was matched against
  std::string producer;          // "directory", "examples", "identity"
  int sample = 0;
  std::filesystem::path path; // empty for generated candidates
  std::string source;
  // Not empty: the producer's reply had no usable code, and this says why. The candidate (its source is the
  // reply) is recorded and judged `no_code` without starting a worker.
  std::string no_code;
};

struct import_report {
  std::vector<candidate> candidates;
  std::vector<std::string> skipped; // files that name no selected problem, with the reason
};

// Matches `level_{L}_problem_{id}_sample_{s}_kernel.py` (KernelBench's generated names) and `<problem
// stem>.py` (sample 0) against the problems. Throws kb::source_error when `dir` is not a readable directory.
import_report candidates_from_directory(const std::filesystem::path& dir,
                                        const std::vector<kb::problem>& problems,
                                        const std::string& producer = "directory");

// For every problem, a candidate whose ModelNew is the problem's own Model: the calibration candidate.
std::vector<candidate> identity_candidates(const std::vector<kb::problem>& problems);

// The built-in suite's example candidates for a device ("cpu" or "cuda"): examples/candidates/<device>.
std::filesystem::path examples_dir(const std::string& device);

// Parses KernelBench's generated file name; false when it is not of that form.
bool parse_generated_name(const std::string& file_name, int& level, int& problem, int& sample);

} // namespace kj::adapters
