// The end-of-run summary: the results table, the verdict counts and where the DB is.
#pragma once

#include "db/store.hpp"

#include <filesystem>

namespace kj::orchestrator {

// How this invocation used its device slots: its wall time and the seconds its evaluate jobs ran.
struct device_use {
  double wall_s = 0;
  double busy_s = 0;
  std::size_t slots = 1;
};

// Prints the verdict counts and the results table of a run, where the time went (phases, and the device's
// idle share in this invocation), and where the DB is.
void print_run_summary(const db::store& store, const std::string& run_uid,
                       const std::filesystem::path& db_path, const device_use& use = {});

} // namespace kj::orchestrator
