// `kj run --summary-json FILE`: one JSON document for CI about what a run did, written whatever the outcome.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kj::cli {

// The run's summary: its id, database, exit code, status, counts by verdict and strict verdict, how many
// count as correct, and one line per evaluation (problem, candidate, verdicts, speedup and whether it may be
// noise). `error` is what stopped kj before or while judging ("" when nothing did); a run the database does
// not hold (refused before it was recorded) has no counts.
nlohmann::json run_summary(const std::string& db_path, const std::string& run_uid, int exit_code,
                           const std::string& error);

// A usage error, before anything runs, for a file that cannot be written: a folder, a missing or read-only
// folder.
void check_summary_path(const std::filesystem::path& file);

// Writes it to `file` (a usage error naming the file when that fails).
void write_run_summary(const std::filesystem::path& file, const nlohmann::json& summary);

} // namespace kj::cli
