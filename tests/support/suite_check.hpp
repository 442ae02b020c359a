// The acceptance check shared by the CPU and GPU tests: `kj run` on the built-in suite with its examples.
#pragma once

#include <string>

namespace kj::test {

// Runs `kj run --device <device>` on the built-in suite and checks every example's `# kj-expect:` verdict.
void check_builtin_suite(const std::string& device);

} // namespace kj::test
