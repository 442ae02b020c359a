// The private state of kj::db::store, shared by the files that implement it.
#pragma once

#include "db/sqlite.hpp"
#include "db/store.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kj::db {

struct store::impl {
  sqlite::connection m_db;
  std::filesystem::path m_path;
  std::shared_ptr<void> m_private_copy; // a read-only store's copy of a file it could not read in place
};

// Optional foreign keys are 0 in the records and NULL in the tables.
inline std::optional<std::int64_t> id_or_null(std::int64_t id) {
  return id == 0 ? std::nullopt : std::optional<std::int64_t>(id);
}

// The verdict columns, read at the edge (the schema's CHECK constraints admit only core/verdict.hpp's names).
inline kj::verdict verdict_column(const sqlite::connection& db, const std::string& name,
                                  const std::string& what) {
  if (const auto v = kj::parse_verdict(name)) return *v;
  db.fail(what, "unknown verdict '" + name + "' in evaluations.verdict");
}
inline kj::strict_verdict strict_verdict_column(const sqlite::connection& db, const std::string& name,
                                                const std::string& what) {
  if (const auto v = kj::parse_strict_verdict(name)) return *v;
  db.fail(what, "unknown strict verdict '" + name + "' in evaluations.strict_verdict");
}

inline kj::precision precision_column(const sqlite::connection& db, const std::string& name,
                                      const std::string& what) {
  if (const auto p = kj::parse_precision(name)) return *p;
  db.fail(what, "unknown precision '" + name + "' (expected fp32, tf32, fp16 or bf16)");
}

inline kj::case_status case_status_column(const sqlite::connection& db, const std::string& name,
                                          const std::string& what) {
  if (const auto s = kj::parse_case_status(name)) return *s;
  db.fail(what, "unknown case status '" + name + "' in verification_cases.status");
}

// The one rule for "correct" (kj::counted_correct) as an SQL predicate over the evaluations aliased `alias`
// ("" for none), built from the enums' names.
inline std::string counted_correct_sql(const std::string& alias) {
  const std::string p = alias.empty() ? "" : alias + ".";
  return "(" + p + "verdict = '" + kj::name_of(kj::verdict::correct) + "' AND " + p + "strict_verdict <> '" +
         kj::name_of(kj::strict_verdict::fail) + "')";
}
inline std::string verdict_is_sql(const std::string& alias, kj::verdict v) {
  return "(" + (alias.empty() ? "" : alias + ".") + "verdict = '" + kj::name_of(v) + "')";
}

// Schema v8's children of an evaluation (db/store_resources.cpp).
void insert_resources(sqlite::connection& db, std::int64_t evaluation_id, const evaluation_record& e,
                      const std::string& what);
void read_resources(const sqlite::connection& db, std::int64_t evaluation_id, const std::string& what,
                    evaluation_record& e);

// Fills the tokens and cost of the rows whose candidate an LLM adapter generated (db/store_llm.cpp).
void add_llm_usage(const sqlite::connection& db, std::vector<evaluation_row>& rows);

} // namespace kj::db
