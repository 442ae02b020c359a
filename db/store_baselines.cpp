// Baselines (schema v3): measured and imported rows with their samples, the cache lookup, the listing.
#include "core/hashing.hpp"
#include "db/store.hpp"
#include "db/store_impl.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kj::db {

using sqlite::connection;

std::optional<double> baseline_record::headline_ms() const {
  if (origin == "imported") return mean_ms;
  std::string headline = "median";
  try {
    headline = nlohmann::json::parse(params_json).value("headline", headline);
  } catch (const nlohmann::json::exception&) {
  }
  return headline == "mean" ? mean_ms : median_ms;
}

namespace {

constexpr const char* baseline_columns =
    "id, cache_key, key_json, origin, problem_id, stack_id, level, file_name, mode, device, precision, "
    "overrides_json, status, error, compile_s, warm_compile_s, method, clock, params_json, median_ms, "
    "mean_ms, "
    "min_ms, max_ms, stdev_ms, hardware, imported_from, created_at";

std::optional<std::int64_t> optional_int(const sqlite::statement& row, std::string_view column) {
  return row.null(column) ? std::nullopt : std::optional<std::int64_t>(row.int64(column));
}

baseline_record read_baseline(const sqlite::connection& db, const sqlite::statement& row) {
  baseline_record b;
  b.id = row.int64("id");
  b.cache_key = row.text("cache_key");
  b.key_json = row.text("key_json");
  b.origin = row.text("origin");
  b.problem_id = optional_int(row, "problem_id").value_or(0);
  b.stack_id = optional_int(row, "stack_id").value_or(0);
  b.level = row.integer("level");
  b.file_name = row.text("file_name");
  b.mode = row.text("mode");
  b.device = row.text("device");
  b.precision = precision_column(db, row.text("precision"), "baseline " + std::to_string(b.id));
  b.overrides_json = row.text("overrides_json");
  b.status = row.text("status");
  b.error = row.text("error");
  b.compile_s = row.optional_real("compile_s");
  b.warm_compile_s = row.optional_real("warm_compile_s");
  b.method = row.text("method");
  b.clock = row.text("clock");
  b.params_json = row.text("params_json");
  b.median_ms = row.optional_real("median_ms");
  b.mean_ms = row.optional_real("mean_ms");
  b.min_ms = row.optional_real("min_ms");
  b.max_ms = row.optional_real("max_ms");
  b.stdev_ms = row.optional_real("stdev_ms");
  b.hardware = row.text("hardware");
  b.imported_from = row.text("imported_from");
  b.created_at = row.text("created_at");
  return b;
}

} // namespace

std::int64_t store::insert_baseline(const baseline_record& b) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("insert baseline ({} L{} {})", b.mode, b.level, b.file_name);
  if (b.origin != "measured" && b.origin != "imported")
    db.fail(what, fmt::format("origin is '{}', expected 'measured' or 'imported'", b.origin));
  sqlite::transaction tx(db);
  db.prepare(
        fmt::format("INSERT INTO baselines ({}) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    baseline_columns),
        what)
      .bind_all(b.cache_key, b.key_json, b.origin, id_or_null(b.problem_id), id_or_null(b.stack_id), b.level,
                b.file_name, b.mode, b.device, name_of(b.precision), b.overrides_json, b.status, b.error,
                b.compile_s, b.warm_compile_s, b.method, b.clock, b.params_json, b.median_ms, b.mean_ms,
                b.min_ms, b.max_ms, b.stdev_ms, b.hardware, b.imported_from,
                b.created_at.empty() ? core::now_iso8601() : b.created_at)
      .run();
  const std::int64_t id = db.last_insert_rowid();
  auto sample =
      db.prepare("INSERT INTO baseline_samples (baseline_id, sample_index, value_ms) VALUES (?, ?, ?)",
                 what + ": insert sample");
  for (std::size_t i = 0; i < b.samples_ms.size(); ++i)
    sample.bind_all(id, static_cast<std::int64_t>(i), b.samples_ms[i]).run();
  tx.commit();
  return id;
}

std::optional<baseline_record> store::find_baseline(const std::string& cache_key) const {
  auto row = m_impl->m_db.prepare(
      fmt::format("SELECT {} FROM baselines WHERE cache_key = ? ORDER BY id DESC LIMIT 1", baseline_columns),
      "look up a cached baseline");
  row.bind_all(cache_key);
  if (!row.step()) return std::nullopt;
  return read_baseline(m_impl->m_db, row);
}

std::vector<baseline_record> store::baselines(std::int64_t stack_id) const {
  auto rows = m_impl->m_db.prepare(
      fmt::format("SELECT {} FROM baselines WHERE origin = 'imported' OR ? = 0 OR stack_id = ? "
                  "ORDER BY level, file_name, mode, origin, id",
                  baseline_columns),
      "list baselines");
  rows.bind_all(stack_id, stack_id);
  std::vector<baseline_record> out;
  while (rows.step())
    out.push_back(read_baseline(m_impl->m_db, rows));
  return out;
}

std::optional<std::int64_t> store::find_problem(int level, const std::string& file_name) const {
  auto row = m_impl->m_db.prepare(
      "SELECT id FROM problems WHERE level = ? AND file_name = ? ORDER BY id DESC LIMIT 1", "find a problem");
  row.bind_all(level, file_name);
  if (!row.step()) return std::nullopt;
  return row.column_int64(0);
}

} // namespace kj::db
