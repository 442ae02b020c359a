// The end-of-run summary: the results table, the verdict counts and where the DB is.
#pragma once

#include "db/store.hpp"

#include <filesystem>

namespace kj::orchestrator {

// Prints the verdict counts and the results table of a run, and where the DB is.
void print_run_summary(const db::store& store, const std::string& run_uid,
                       const std::filesystem::path& db_path);

} // namespace kj::orchestrator
