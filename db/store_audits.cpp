// Schema v10: the problem audit's rows (kj audit), written one per audited problem and read newest first.
#include "core/hashing.hpp"
#include "db/store_impl.hpp"

#include <fmt/format.h>

namespace kj::db {

using sqlite::connection;

std::int64_t store::insert_problem_audit(const problem_audit_record& a) {
  connection& db = m_impl->m_db;
  db.prepare(
        "INSERT INTO problem_audits (problem_id, stack_id, device, protocol, created_at, unsound, "
        "stochastic, constant_reference, tolerance_use, reasons, notes, nulls_json, error) VALUES (?, ?, "
        "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        fmt::format("record the audit of problem {}", a.problem_id))
      .bind_all(a.problem_id, a.stack_id, a.device, a.protocol,
                a.created_at.empty() ? core::now_iso8601() : a.created_at, a.unsound ? 1 : 0,
                a.stochastic ? 1 : 0, a.constant_reference ? 1 : 0, a.tolerance_use, a.reasons, a.notes,
                a.nulls_json, a.error)
      .run();
  return db.last_insert_rowid();
}

std::vector<problem_audit_record> store::latest_problem_audits() const {
  auto rows = m_impl->m_db.prepare("SELECT id, problem_id, stack_id, device, protocol, created_at, unsound, "
                                   "stochastic, constant_reference, "
                                   "tolerance_use, reasons, notes, nulls_json, error FROM problem_audits a "
                                   "WHERE id = (SELECT MAX(id) FROM "
                                   "problem_audits b WHERE b.problem_id = a.problem_id AND b.device = "
                                   "a.device) ORDER BY problem_id, device",
                                   "read the problem audits");
  std::vector<problem_audit_record> out;
  while (rows.step())
    out.push_back({.id = rows.column_int64(0),
                   .problem_id = rows.column_int64(1),
                   .stack_id = rows.column_int64(2),
                   .device = rows.column_text(3),
                   .protocol = rows.column_text(4),
                   .created_at = rows.column_text(5),
                   .unsound = rows.column_int(6) != 0,
                   .stochastic = rows.column_int(7) != 0,
                   .constant_reference = rows.column_int(8) != 0,
                   .tolerance_use = rows.column_optional_double(9),
                   .reasons = rows.column_text(10),
                   .notes = rows.column_text(11),
                   .nulls_json = rows.column_text(12),
                   .error = rows.column_text(13)});
  return out;
}

} // namespace kj::db
