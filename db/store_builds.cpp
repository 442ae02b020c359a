// The builds table (schema v5): a candidate's content-addressed builds and their compiler logs.
#include "core/hashing.hpp"
#include "db/store_impl.hpp"

#include <fmt/core.h>

namespace kj::db {

std::int64_t store::upsert_build(const build_row& build) {
  sqlite::connection& db = m_impl->m_db;
  const std::string what =
      fmt::format("record build {} of candidate {}", build.build_key, build.candidate_id);
  if (build.build_key.empty()) db.fail(what, "the build key is empty");
  db.prepare("INSERT INTO builds (candidate_id, build_key, device, status, seconds, log, created_at) "
             "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (candidate_id, build_key) DO NOTHING",
             what)
      .bind_all(build.candidate_id, build.build_key, build.device, build.status, build.seconds, build.log,
                build.created_at.empty() ? core::now_iso8601() : build.created_at)
      .run();
  auto find = db.prepare("SELECT id FROM builds WHERE candidate_id = ? AND build_key = ?", what);
  find.bind_all(build.candidate_id, build.build_key);
  if (!find.step()) db.fail(what, "the row vanished after insertion");
  return find.column_int64(0);
}

std::optional<build_row> store::find_build(std::int64_t candidate_id, const std::string& build_key) const {
  const sqlite::connection& db = m_impl->m_db;
  auto row = db.prepare("SELECT device, status, seconds, log, created_at FROM builds "
                        "WHERE candidate_id = ? AND build_key = ?",
                        fmt::format("read build {} of candidate {}", build_key, candidate_id));
  row.bind_all(candidate_id, build_key);
  if (!row.step()) return std::nullopt;
  return build_row{candidate_id,         build_key,          row.column_text(0), row.column_text(1),
                   row.column_double(2), row.column_text(3), row.column_text(4)};
}

} // namespace kj::db
