// Implements `kj merge`: the source is attached read-only and copied table by table into the output in one
// transaction, its ids mapped to the output's through temporary tables, rows matched by natural keys.
#include "db/merge.hpp"

#include "core/hashing.hpp"
#include "db/merge_plan.hpp"
#include "db/migrations.hpp"
#include "db/sqlite.hpp"
#include "db/store.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

namespace kj::db {

namespace fs = std::filesystem;
using sqlite::connection;

namespace {

using merge_detail::check_plan;
using merge_detail::copy_plan;
using merge_detail::reference;
using merge_detail::table_copy;

std::vector<std::string> columns_of(const connection& db, const std::string& table, bool skip_id) {
  auto info = db.prepare(fmt::format("SELECT name FROM pragma_table_info('{}', 'main') ORDER BY cid", table),
                         fmt::format("read the columns of {}", table));
  std::vector<std::string> columns;
  while (info.step())
    if (!(skip_id && info.column_text(0) == "id")) columns.push_back(info.column_text(0));
  return columns;
}

// Copies the selected rows of one table: the mapped source rows go to temp.stage, those without a match
// (in the output, or earlier in the stage) are inserted with ids after the output's largest, and every
// staged row's id is mapped to its output row.
void copy_table(connection& db, const table_copy& t) {
  const std::string what = fmt::format("merge table {}", t.table);
  const std::vector<std::string> columns = columns_of(db, t.table, t.has_id);
  std::vector<std::string> select;
  for (const std::string& c : columns) {
    const auto ref = std::find_if(t.references.begin(), t.references.end(),
                                  [&](const reference& r) { return c == r.column; });
    select.push_back(
        ref == t.references.end()
            ? "s." + c
            : fmt::format("(SELECT dst FROM temp.map_{} WHERE src = s.{}) AS {}", ref->table, c, c));
  }
  const std::string list = fmt::format("{}", fmt::join(columns, ", "));
  db.exec(fmt::format("DROP TABLE IF EXISTS temp.stage; CREATE TEMP TABLE stage AS SELECT {}{} FROM src.{} s "
                      "WHERE {}",
                      t.has_id ? "s.id AS src_id, " : "", fmt::join(select, ", "), t.table, t.filter),
          what);
  const std::string unmatched =
      t.match ? fmt::format("NOT EXISTS (SELECT 1 FROM main.{} d WHERE {})", t.table, t.match) : "1";
  if (!t.has_id) {
    db.exec(fmt::format("INSERT INTO main.{0} ({1}) SELECT {1} FROM temp.stage x WHERE {2}", t.table, list,
                        unmatched),
            what);
    return;
  }
  const std::string first_in_stage =
      t.match
          ? fmt::format("NOT EXISTS (SELECT 1 FROM temp.stage d WHERE d.src_id < x.src_id AND {})", t.match)
          : "1";
  db.exec(fmt::format(R"sql(
CREATE TEMP TABLE new_{0} (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
INSERT INTO temp.new_{0} (src, dst)
  SELECT src_id, (SELECT coalesce(max(id), 0) FROM main.{0}) + row_number() OVER (ORDER BY src_id)
  FROM temp.stage x WHERE {2} AND {3};
INSERT INTO main.{0} (id, {1}) SELECT n.dst, {1} FROM temp.stage x JOIN temp.new_{0} n ON n.src = x.src_id
  ORDER BY n.dst;
CREATE TEMP TABLE map_{0} (src INTEGER PRIMARY KEY, dst INTEGER NOT NULL);
INSERT INTO temp.map_{0} SELECT src, dst FROM temp.new_{0};
)sql",
                      t.table, list, unmatched, first_in_stage),
          what);
  if (t.match)
    db.exec(
        fmt::format("INSERT OR IGNORE INTO temp.map_{0} SELECT x.src_id, (SELECT min(d.id) FROM main.{0} d "
                    "WHERE {1}) FROM temp.stage x",
                    t.table, t.match),
        what);
}

// The parts of each run the source touched (run_parts): an output run that existed before and had no parts
// gets its own row as its first part; then each source run's parts (its own run_parts when it was merged
// before, else itself). A part seen again is updated when it has grown or finished since.
void merge_run_parts(connection& db, const fs::path& output, const fs::path& source) {
  const std::string now = core::now_iso8601();
  db.prepare(R"sql(
INSERT INTO main.run_parts (run_id, shard, created_at, status, command_line, source_file, evaluations, merged_at)
SELECT r.id, coalesce(json_extract(r.config_json, '$.shard'), ''), r.created_at, r.status, r.command_line, ?1,
       (SELECT count(*) FROM main.evaluations e WHERE e.run_id = r.id AND e.purpose = 'result'), ?2
FROM main.runs r
WHERE r.id IN (SELECT dst FROM temp.map_runs) AND r.id NOT IN (SELECT dst FROM temp.new_runs)
  AND NOT EXISTS (SELECT 1 FROM main.run_parts p WHERE p.run_id = r.id)
)sql",
             "record the parts of the output's runs")
      .bind_all(fs::absolute(output).string(), now)
      .run();
  db.prepare(R"sql(
WITH parts AS (
  SELECT run_id, shard, created_at, status, command_line, source_file, evaluations FROM src.run_parts
  UNION ALL
  SELECT r.id, coalesce(json_extract(r.config_json, '$.shard'), ''), r.created_at, r.status, r.command_line, ?1,
         (SELECT count(*) FROM src.evaluations e WHERE e.run_id = r.id AND e.purpose = 'result')
  FROM src.runs r WHERE NOT EXISTS (SELECT 1 FROM src.run_parts p WHERE p.run_id = r.id)
)
INSERT INTO main.run_parts (run_id, shard, created_at, status, command_line, source_file, evaluations, merged_at)
SELECT m.dst, p.shard, p.created_at, p.status, p.command_line, p.source_file, p.evaluations, ?2
FROM parts p JOIN temp.map_runs m ON m.src = p.run_id WHERE true
ON CONFLICT (run_id, shard, created_at) DO UPDATE SET status = excluded.status,
  evaluations = excluded.evaluations, source_file = excluded.source_file, merged_at = excluded.merged_at
WHERE excluded.evaluations > run_parts.evaluations
   OR (excluded.evaluations = run_parts.evaluations AND excluded.status = 'finished'
       AND run_parts.status <> 'finished')
)sql",
             "record the parts of the source's runs")
      .bind_all(fs::absolute(source).string(), now)
      .run();
  // A merged run is as finished as its parts: their common status, except that a part still 'running' when
  // it was merged (or killed) leaves the run 'interrupted', as do parts that disagree.
  db.exec(R"sql(
UPDATE main.runs SET status = (
  SELECT CASE WHEN count(DISTINCT p.status) = 1 AND min(p.status) <> 'running' THEN min(p.status)
              ELSE 'interrupted' END
  FROM main.run_parts p WHERE p.run_id = runs.id)
WHERE id IN (SELECT dst FROM temp.map_runs)
)sql",
          "set the status of merged runs");
}

std::string uri_of(const fs::path& path) {
  std::string uri = "file:";
  for (const unsigned char c : fs::absolute(path).string()) {
    if (std::isalnum(c) || std::string_view("/._-~").find(static_cast<char>(c)) != std::string_view::npos)
      uri += static_cast<char>(c);
    else
      uri += fmt::format("%{:02X}", c);
  }
  return uri + "?mode=ro";
}

// The source's schema version, checked against the output's (this build's), and its tables against the ones
// merge knows.
void check_source(const connection& db, const fs::path& source, const fs::path& output) {
  int version = 0;
  try {
    version = static_cast<int>(db.query_int64("PRAGMA src.user_version", "read the schema version"));
  } catch (const db_error& e) {
    throw db_error(
        fmt::format("cannot merge '{}': not a readable SQLite database ({})", source.string(), e.what()));
  }
  if (version == 0)
    throw db_error(
        fmt::format("cannot merge '{}': not a kerneljudge database (schema version 0)", source.string()));
  if (version > schema_version)
    throw db_error(fmt::format("cannot merge '{}': its schema version {} is newer than the {} of '{}' (this "
                               "kj's); merge with a newer kj",
                               source.string(), version, schema_version, output.string()));
  if (version < schema_version)
    throw db_error(fmt::format("cannot merge '{}': its schema version is {}, the output '{}' has {}; migrate "
                               "it first (kj db migrate --db {})",
                               source.string(), version, output.string(), schema_version, source.string()));
  auto tables = db.prepare("SELECT name FROM src.sqlite_master WHERE type = 'table' AND name NOT LIKE "
                           "'sqlite_%' AND name <> 'schema_migrations' ORDER BY name",
                           "list the source's tables");
  while (tables.step()) {
    const std::string name = tables.column_text(0);
    if (std::find(merged_tables().begin(), merged_tables().end(), name) == merged_tables().end())
      throw db_error(
          fmt::format("cannot merge '{}': kj merge does not know its table '{}'", source.string(), name));
  }
}

// The shards of one run share what defines it: a source run already in the output under its name was judged
// by the same rules (sizes, timing, protocol, ...), and a shard already merged from another file is not
// merged again. Machine-specific settings (folders, GPUs, the sandbox) may differ between shards.
void check_runs_agree(const connection& db, const fs::path& source) {
  static const char* const defining[] = {"overrides", "timing",    "protocol",      "strict",
                                         "trials",    "precision", "input_rng",     "kb_version",
                                         "device",    "filter",    "library_policy"};
  auto pairs =
      db.prepare("SELECT s.run_uid, s.config_json, d.config_json, d.id, "
                 "coalesce(json_extract(s.config_json, '$.shard'), ''), s.created_at FROM src.runs s "
                 "JOIN main.runs d ON d.run_uid = s.run_uid",
                 "compare the runs of both databases");
  while (pairs.step()) {
    const std::string uid = pairs.column_text(0), shard = pairs.column_text(4);
    const auto theirs = nlohmann::json::parse(pairs.column_text(1), nullptr, false);
    const auto ours = nlohmann::json::parse(pairs.column_text(2), nullptr, false);
    std::vector<std::string> differ;
    for (const char* key : defining)
      if (theirs.is_object() && ours.is_object() &&
          theirs.value(key, nlohmann::json()) != ours.value(key, nlohmann::json()))
        differ.push_back(key);
    if (!differ.empty())
      throw db_error(
          fmt::format("cannot merge '{}': its run {} was judged with other {} than run {} here; kj "
                      "merge joins the shards of one run (kj run --shard i/N with the same options)",
                      source.string(), uid, fmt::join(differ, ", "), uid));
    if (shard.empty()) continue;
    // Another run under the same name and shard (a part merged again after it grew has its created_at).
    auto merged = db.prepare("SELECT source_file FROM main.run_parts WHERE run_id = ?1 AND shard = ?2 AND "
                             "created_at <> ?3",
                             "find the shard among the parts merged");
    merged.bind_all(pairs.column_int64(3), shard, pairs.column_text(5));
    if (merged.step())
      throw db_error(fmt::format("cannot merge '{}': shard {} of run {} is already merged (from {})",
                                 source.string(), shard, uid, merged.column_text(0)));
  }
}

// DETACH runs outside the transaction: declared before it, destroyed after it. The connection is closed
// right after, which detaches as well, so a failure here is not worth an exception from a destructor.
struct attachment {
  connection& db;
  ~attachment() {
    try {
      db.exec("DETACH DATABASE src", "detach the source");
    } catch (const db_error&) {
    }
  }
};

std::int64_t count_rows(const connection& db, const std::string& table) {
  return db.query_int64(fmt::format("SELECT count(*) FROM main.{}", table), fmt::format("count {}", table));
}

} // namespace

const std::vector<std::string>& merged_tables() {
  static const std::vector<std::string> tables = [] {
    std::vector<std::string> names;
    for (const table_copy& t : copy_plan())
      names.emplace_back(t.table);
    names.emplace_back("run_parts");
    return names;
  }();
  return tables;
}

std::int64_t merge_report::added_total() const {
  std::int64_t total = 0;
  for (const auto& [table, n] : added)
    total += n;
  return total;
}

std::int64_t merge_report::added_to(const std::string& table) const {
  for (const auto& [name, n] : added)
    if (name == table) return n;
  return 0;
}

merge_report merge_database(const fs::path& output, const fs::path& source) {
  std::error_code ec;
  if (!fs::is_regular_file(source, ec))
    throw db_error(fmt::format("cannot merge '{}': no such file", source.string()));
  {
    std::string header(16, '\0');
    std::ifstream in(source, std::ios::binary);
    in.read(header.data(), 16);
    if (header != std::string("SQLite format 3\0", 16))
      throw db_error(fmt::format("cannot merge '{}': not an SQLite database (kj merges the kj.sqlite files "
                                 "that kj run wrote, e.g. one per --shard)",
                                 source.string()));
  }
  {
    const store created = store::open(output);
  } // creates or migrates the output, with kj's settings
  if (fs::equivalent(output, source, ec))
    throw db_error(fmt::format("cannot merge '{}' into itself: name another output", source.string()));
  connection db = connection::open(output, connection::open_mode::read_write_attach);
  db.exec("PRAGMA foreign_keys = ON", "enable foreign keys");
  db.prepare("ATTACH DATABASE ? AS src", fmt::format("attach '{}'", source.string()))
      .bind_all(uri_of(source))
      .run();
  const attachment attached{db};
  check_source(db, source, output);
  check_plan(db);
  check_runs_agree(db, source);

  merge_report report;
  report.source = source;
  std::vector<std::int64_t> before;
  for (const std::string& table : merged_tables())
    before.push_back(count_rows(db, table));
  sqlite::transaction tx(db);
  for (const table_copy& t : copy_plan()) {
    copy_table(db, t);
    if (std::string_view(t.table) == "runs") merge_run_parts(db, output, source);
  }
  report.evaluations_present = db.query_int64("SELECT (SELECT count(*) FROM temp.map_evaluations) - "
                                              "(SELECT count(*) FROM temp.new_evaluations)",
                                              "count the evaluations already merged");
  {
    auto runs = db.prepare("SELECT run_uid FROM src.runs ORDER BY id", "list the source's runs");
    while (runs.step())
      report.run_uids.push_back(runs.column_text(0));
  }
  tx.commit();
  for (std::size_t i = 0; i < merged_tables().size(); ++i)
    report.added.emplace_back(merged_tables()[i], count_rows(db, merged_tables()[i]) - before[i]);
  return report;
}

} // namespace kj::db
