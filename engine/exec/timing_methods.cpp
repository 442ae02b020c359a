// The timing methods' table (timing_methods.hpp).
#include "engine/exec/timing_methods.hpp"

#include <fmt/format.h>
#include <stdexcept>

namespace kj::exec {

const std::vector<timing_method>& timing_methods() {
  static const std::vector<timing_method> methods{
      {"robust", "L2 flush, events, device sync, adaptive stop, median", "median", true},
      {"kernelbench", "KernelBench main's cuda_event protocol, mean of 100", "mean", false},
      {"cuda-agent", "summed kernel time of 10 traced calls after 5 warmups, no flush, mean", "mean", false},
  };
  return methods;
}

const timing_method& timing_method_named(std::string_view name) {
  for (const auto& m : timing_methods())
    if (m.name == name) return m;
  throw std::invalid_argument(fmt::format("unknown timing method '{}' (expected one of: {})", name,
                                          fmt::join(timing_method_names(), ", ")));
}

std::vector<std::string> timing_method_names() {
  std::vector<std::string> names;
  for (const auto& m : timing_methods())
    names.emplace_back(m.name);
  return names;
}

} // namespace kj::exec
