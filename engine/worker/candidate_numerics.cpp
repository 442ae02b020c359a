// Implements what the judge makes of the dtypes a candidate's forward made and the numerics flags it changed.
#include "engine/worker/candidate_numerics.hpp"

#include <fmt/core.h>
#include <string>
#include <utility>

namespace kj::worker {
namespace {

// Bytes per value of a floating dtype as torch names it (0: not one kj compares).
int float_bytes(const std::string& dtype) {
  if (dtype == "float64") return 8;
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  if (dtype.starts_with("float8")) return 1;
  return 0;
}

// Bytes per value a run's precision keeps its tensors in (tf32: float32 tensors).
int float_bytes(precision run) {
  return is_fp32_storage(run) ? 4 : 2;
}

} // namespace

std::string lower_precision(const nlohmann::json& dtypes, precision run) {
  const int bytes_run = float_bytes(run);
  std::string out;
  for (const auto& [dtype, ops] : dtypes.items()) {
    const int bytes = float_bytes(dtype);
    if (bytes == 0 || bytes >= bytes_run) continue;
    std::string list;
    for (const auto& [op, count] : ops.items())
      if (count.is_number_integer())
        list += fmt::format("{}{} x{}", list.empty() ? "" : ", ", op.substr(0, 40), count.get<long>());
    out += fmt::format("{}{} tensors ({})", out.empty() ? "" : "; ", dtype, list.substr(0, 200));
  }
  return out.empty() ? "" : fmt::format("ModelNew.forward made {} in an {} run", out, name_of(run));
}

std::optional<precision> candidate_numerics(const nlohmann::json& dtypes, const nlohmann::json& flags,
                                            precision run) {
  for (const auto& [dtype, narrower] :
       {std::pair{"bfloat16", precision::bf16}, std::pair{"float16", precision::fp16}})
    if (dtypes.contains(dtype) && float_bytes(dtype) < float_bytes(run)) return narrower;
  if (run != precision::fp32) return std::nullopt;
  for (const auto& [flag, change] : flags.items()) {
    const std::string to = change.is_string() ? change.get<std::string>() : "";
    if ((flag.ends_with("allow_tf32") && to == "False -> True") ||
        (flag.ends_with("float32_matmul_precision") && to == "highest -> high"))
      return precision::tf32;
  }
  return std::nullopt;
}

} // namespace kj::worker
