// The console view of a run: a progress line per job with an ETA, and the summary at the end.
#pragma once

#include "adapters/candidates.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"

#include <chrono>
#include <filesystem>

namespace kj::orchestrator {

class progress_view {
public:
  explicit progress_view(std::size_t total) : m_total(total), m_start(std::chrono::steady_clock::now()) {}
  void skip() { ++m_done, ++m_skipped; }
  void begin(const kb::problem& problem, const adapters::candidate& candidate);
  void end(const db::evaluation_record& record);

private:
  std::size_t m_total = 0, m_done = 0, m_skipped = 0;
  double m_busy_s = 0;
  std::chrono::steady_clock::time_point m_start;
};

// Prints the verdict counts and the results table of a run, and where the DB is.
void print_run_summary(const db::store& store, const std::string& run_uid,
                       const std::filesystem::path& db_path);

} // namespace kj::orchestrator
