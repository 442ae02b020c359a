// The precision a run computes at (KernelBench's precision option, and TF32 as a numerics of its own): parsed
// from its name at the edges (the command line, kj.toml, a job's JSON, the DB, an audit file), named again
// only there and on screen.
#pragma once

#include "core/enum_names.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kj {

enum class precision {
  fp32, // float32 tensors, TF32 off
  tf32, // float32 tensors, TF32 matmuls and convolutions (CUDA only)
  fp16, // models and floating inputs cast to float16
  bf16, // ... to bfloat16
};

inline constexpr std::array<std::string_view, 4> precision_names{"fp32", "tf32", "fp16", "bf16"};

inline std::string name_of(precision p) {
  return name_in(precision_names, p);
}

inline std::optional<precision> parse_precision(std::string_view name) {
  return parse_in<precision>(precision_names, name);
}

// Whether its tolerance is KernelBench main's fp32 one (1e-4): fp32 and tf32 (fp32 tensors) are.
inline bool is_fp32_storage(precision p) {
  return p == precision::fp32 || p == precision::tf32;
}

} // namespace kj
