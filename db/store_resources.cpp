// Schema v8's children of an evaluation: the memory it held and the wall time of its phases.
#include "db/store_impl.hpp"

#include <fmt/format.h>

namespace kj::db {

using sqlite::connection;

namespace {

std::optional<std::int64_t> optional_int(const sqlite::statement& row, int column) {
  return row.is_null(column) ? std::nullopt : std::optional<std::int64_t>(row.column_int64(column));
}

} // namespace

void insert_resources(connection& db, std::int64_t evaluation_id, const evaluation_record& e,
                      const std::string& what) {
  if (e.memory) {
    const memory_record& m = *e.memory;
    db.prepare("INSERT INTO evaluation_memory (evaluation_id, device_peak_bytes, judge_device_bytes, "
               "runner_device_bytes, judge_rss_bytes, runner_rss_bytes, budget_bytes) VALUES (?, ?, ?, ?, ?, "
               "?, ?)",
               what + ": insert memory")
        .bind_all(evaluation_id, m.device_peak_bytes, m.judge_device_bytes, m.runner_device_bytes,
                  m.judge_rss_bytes, m.runner_rss_bytes, m.budget_bytes)
        .run();
  }
  auto phase =
      db.prepare("INSERT OR REPLACE INTO evaluation_phases (evaluation_id, phase, seconds) VALUES (?, ?, ?)",
                 what + ": insert phase time");
  for (const phase_record& p : e.phases)
    phase.bind_all(evaluation_id, p.phase, p.seconds).run();
}

void read_resources(const connection& db, std::int64_t evaluation_id, const std::string& what,
                    evaluation_record& e) {
  auto memory =
      db.prepare("SELECT device_peak_bytes, judge_device_bytes, runner_device_bytes, judge_rss_bytes, "
                 "runner_rss_bytes, budget_bytes FROM evaluation_memory WHERE evaluation_id = ?",
                 what + ": memory");
  memory.bind_all(evaluation_id);
  if (memory.step())
    e.memory = memory_record{.device_peak_bytes = optional_int(memory, 0),
                             .judge_device_bytes = optional_int(memory, 1),
                             .runner_device_bytes = optional_int(memory, 2),
                             .judge_rss_bytes = optional_int(memory, 3),
                             .runner_rss_bytes = optional_int(memory, 4),
                             .budget_bytes = optional_int(memory, 5)};
  auto phases =
      db.prepare("SELECT phase, seconds FROM evaluation_phases WHERE evaluation_id = ? ORDER BY rowid",
                 what + ": phases");
  phases.bind_all(evaluation_id);
  while (phases.step())
    e.phases.push_back({phases.column_text(0), phases.column_double(1)});
}

} // namespace kj::db
