// A published set of KernelBench kernels, imported to be judged on the user's own GPU: CUDA-L1's per-GPU
// release files (deepreinforce-ai/CUDA-L1, optimized_cuda_code/<gpu>.json), one JSON object per line with
// level_id, task_id, ref_code, custom_code, cuda_graph_code, cudnn_code and the claimed speedups
// (score_default, score_torch_compile_default, score_torch_compile_reduce_overhead, score_cuda_graph,
// score_cudnn). The import writes a folder kj runs as it is: the reference codes as a KernelBench tree, the
// kernels as KernelBench-named candidate files, and claims.json (each row's claims and provenance).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::adapters {

// A release file that cannot be read as CUDA-L1's format: the message names the file, line and field.
struct import_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct published_row {
  int line = 0; // 1-based line of the release file
  int level = 0;
  int task = 0;
  std::string ref_code;
  std::optional<std::string> kernel; // custom_code; none: missing (null, "None" or empty)
  std::map<std::string, std::string>
      variants;                         // cuda_graph_code, cudnn_code: the references they were timed with
  std::map<std::string, double> claims; // eager, torch_compile, torch_compile_reduce_overhead, ...
};

// Parses a release file; throws import_error on a line that is not a JSON object or a field of the wrong
// type. A kernel given as null or the text "None" is missing, not an error.
std::vector<published_row> read_cuda_l1(const std::filesystem::path& file);

struct import_options {
  std::filesystem::path release;     // the release file
  std::filesystem::path out;         // the folder to write (must be empty or not exist)
  std::filesystem::path kernelbench; // a KernelBench checkout to match references against; empty: none
  std::string gpu;                   // the GPU the claims were measured on (default: the file's stem)
};

// Writes out/KernelBench/level<L>/<task>_<name>.py (the reference codes as given), out/candidates/
// level_<L>_problem_<task>_sample_0_kernel.py (the kernels), out/variants/<variant>/... and out/claims.json;
// returns claims.json's content. A reference identical to the KernelBench problem of the same level and id
// takes its name and is marked "identical"; one that differs keeps its own text and is marked "differs".
nlohmann::json import_cuda_l1(const import_options& options);

} // namespace kj::adapters
