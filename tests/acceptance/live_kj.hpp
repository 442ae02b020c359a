// A `kj` started in the background (to be interrupted or killed mid-run) and the evaluations its run holds so
// far, for the acceptance tests that stop a run and resume it.
#pragma once

#include "tests/support/paths.hpp" // start_kj

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kj::test {

// The evaluations run `run_id` holds so far; -1 while the file or its tables are not there yet.
std::int64_t evaluations_so_far(const std::filesystem::path& db, const std::string& run_id);

} // namespace kj::test
