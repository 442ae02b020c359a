// The timing methods, one table (timing_methods.cpp): each name with its help for --timing-method, the
// statistic its results headline, and whether it draws fresh inputs for every call in alternating rounds. The
// worker's implementations (engine/worker/timing_bridge.cpp) are a table of the same names. A new method is a
// line here and a host and a CUDA function there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kj::exec {

struct timing_method {
  std::string_view name;
  std::string_view help;     // for --timing-method
  std::string_view headline; // the statistic results and reports use: "median" or "mean"
  // Fresh inputs for every timed call, the candidate and the reference in alternating rounds, the outputs of
  // timed calls checked and the judge's clock as a bound on the candidate's timer (robust).
  bool fresh_inputs = false;
};

// Every method, the default first.
const std::vector<timing_method>& timing_methods();

// The method named `name`; throws std::invalid_argument naming the methods there are.
const timing_method& timing_method_named(std::string_view name);

// The names, for a CLI check.
std::vector<std::string> timing_method_names();

} // namespace kj::exec
