// `kj run --summary-json FILE`: one JSON document for CI about what a run did, written whatever the outcome.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// `kj run` refused while its options were read (CLI11 refused a value: the command never ran): writes the
// summary with exit code 2 and `error` where the command line asks for one (--summary-json FILE); a file that
// cannot be written is left, since the refusal itself is what the user sees.
void write_refused_summary(const std::vector<std::string>& args, const std::string& error);

} // namespace kj::cli
