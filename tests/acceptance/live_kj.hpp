// A `kj` started in the background (to be interrupted or killed mid-run) and the evaluations its run holds so
// far, for the acceptance tests that stop a run and resume it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace kj::test {

// Starts `kj args...` with stdout and stderr in `log`; returns its pid (waitpid it).
pid_t start_kj(const std::vector<std::string>& args, const std::filesystem::path& log);

// The evaluations run `run_id` holds so far; -1 while the file or its tables are not there yet.
std::int64_t evaluations_so_far(const std::filesystem::path& db, const std::string& run_id);

} // namespace kj::test
