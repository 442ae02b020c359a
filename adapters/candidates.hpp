// Import adapters: candidates from a directory of KernelBench-style files and CUDA-Agent workdirs, and the
// built-in `identity` producer.
#pragma once

#include "kernelbench/problems.hpp"
#include "kernelbench/source_text.hpp"

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
  // A file that is not UTF-8: `source` is the text it is judged as (kb::python_source_text), `bytes` the
  // file's own bytes (stored losslessly), `encoding_note` what became of them at `encoding_line`.
  std::string bytes;
  std::string encoding_note;
  int encoding_line = 0;
};

struct import_report {
  std::vector<candidate> candidates;
  std::vector<std::string> skipped;    // files whose names are not candidate names, with the reason
  std::vector<std::string> unselected; // files named for problems that are not selected, with the reason
};

// Matches `level_{L}_problem_{id}_sample_{s}_kernel.py` (KernelBench's generated names) and `<problem
// stem>.py` (sample 0) against the problems. `dir` may also be one such file, or any .py file when one
// problem is selected. Throws kb::source_error when `dir` is neither a directory nor a file.
import_report candidates_from_directory(const std::filesystem::path& dir,
                                        const std::vector<kb::problem>& problems,
                                        const std::string& producer = "directory");

// For every problem, a candidate whose ModelNew is the problem's own Model: the calibration candidate.
std::vector<candidate> identity_candidates(const std::vector<kb::problem>& problems);

// The built-in suite's example candidates for a device ("cpu" or "cuda"): examples/candidates/<device>.
std::filesystem::path examples_dir(const std::string& device);

// A candidate of these bytes: `source` is the text they are judged as; a file that is not UTF-8 keeps its
// bytes and the note on how they were read.
candidate candidate_of_bytes(std::size_t problem_index, std::string producer, int sample,
                             std::filesystem::path path, const std::string& bytes);

// Parses KernelBench's generated file name; false when it is not of that form.
bool parse_generated_name(const std::string& file_name, int& level, int& problem, int& sample);

} // namespace kj::adapters
