// The acceptance check shared by the CPU and GPU tests: `kj run` on the built-in suite with its examples.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace kj::test {

// Runs `kj run --device <device>` on the built-in suite and checks every example's `# kj-expect:` verdict.
void check_builtin_suite(const std::string& device);

// True when kj kept a correct row's CPU timing but credited no speedup because the host's speed moved under
// every attempt at a comparable pair (a loaded CI machine running two tests at once): `untrusted` says so and
// `speedup` is null. A test that asks for a speedup accepts this instead.
bool speedup_withheld_for_host(const nlohmann::json& row);

} // namespace kj::test
