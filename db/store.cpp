// The store's life cycle (open, migrate, read-only open), the deduplicating upserts, runs, and the hash/time
// helpers.
#include "db/store.hpp"

#include "core/hashing.hpp"
#include "db/lock_wait.hpp"
#include "db/migrations.hpp"
#include "db/store_impl.hpp"

#include <atomic>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>

namespace kj::db {

namespace fs = std::filesystem;
using sqlite::connection;

store::store(std::unique_ptr<impl> state) : m_impl(std::move(state)) {}
store::store(store&&) noexcept = default;
store& store::operator=(store&&) noexcept = default;
store::~store() = default;

namespace {

// What is wrong with a database path before SQLite says "unable to open database file": a folder, a missing
// folder, or no file (for a reader).
void check_path(const fs::path& path, bool must_exist) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw db_error(fmt::format("cannot open database '{}': it is a folder; name a file (e.g. {})",
                               path.string(), (path / "kj.sqlite").string()));
  const fs::path folder = path.parent_path();
  if (!must_exist && !folder.empty() && !fs::is_directory(folder, ec))
    throw db_error(
        fmt::format("cannot open database '{}': its folder {} {}", path.string(), folder.string(),
                    fs::exists(folder, ec) ? "is a file, not a folder" : "does not exist (create it first)"));
  if (must_exist && !fs::is_regular_file(path, ec))
    throw db_error(
        fmt::format("cannot open database '{}': no such file{}", path.string(),
                    path.string() == "kj.sqlite" ? " (kj run writes it here; --db names another)" : ""));
}

// PRAGMA journal_mode = WAL on a file another process is creating or migrating: SQLite answers SQLITE_BUSY
// at once, without the busy handler, so kj retries here for as long as the handler would wait.
std::string switch_to_wal(connection& db) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    try {
      return db.query_text("PRAGMA journal_mode = WAL", "switch to WAL journal mode");
    } catch (const db_error&) {
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!db.last_error_busy() || waited >= sqlite::lock_wait_limit_s()) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace

store store::open(const fs::path& path) {
  check_path(path, false);
  connection db = connection::open(path, connection::open_mode::read_write_create);
  db.exec("PRAGMA foreign_keys = ON", "enable foreign keys");
  // Reading the header makes a non-database file fail here, at open; a newer database is left untouched.
  const int version = read_user_version(db);
  require_not_newer(db, version, schema_version);
  // Another tool's SQLite file (no schema version of kj's, tables of its own) is refused before anything is
  // written to it: no migration, no WAL switch, no -wal or -shm beside it.
  if (version == 0 && db.query_int64("SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view')",
                                     "read the schema") > 0)
    throw db_error(
        fmt::format("database '{}' is not a kerneljudge database: it holds tables of another tool "
                    "and no kj schema version; kj writes only to its own databases (give --db a new "
                    "file, or one kj made)",
                    path.string()));
  // Setting the journal mode creates the file, so an unusable path fails here too, not at the first write.
  const std::string mode = switch_to_wal(db);
  if (mode != "wal") db.fail("switch to WAL journal mode", fmt::format("the journal mode stayed '{}'", mode));
  // In WAL mode NORMAL cannot corrupt the database; a power cut may lose only the last commits.
  db.exec("PRAGMA synchronous = NORMAL", "set synchronous mode");
  migrate(db);
  return store(std::make_unique<impl>(impl{std::move(db), path}));
}

namespace {

// A copy of the file and its WAL in a private folder (removed with the store), for a reader that may neither
// create the -shm index beside the file nor ignore a WAL that holds committed rows.
std::shared_ptr<void> private_copy(const fs::path& path, fs::path& copy) {
  static std::atomic<unsigned> sequence{0};
  const fs::path dir = fs::temp_directory_path() / fmt::format("kj-read-{}-{}", ::getpid(), sequence++);
  fs::create_directories(dir);
  std::shared_ptr<void> keep(nullptr, [dir](void*) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  });
  copy = dir / path.filename();
  fs::copy_file(path, copy);
  if (std::error_code ec; fs::exists(path.string() + "-wal", ec))
    fs::copy_file(path.string() + "-wal", copy.string() + "-wal");
  return keep;
}

// A reader of a file on a read-only mount, or of another user's file whose -shm it may not write: SQLite can
// read it in place when its WAL is empty (immutable), else from a private copy.
std::pair<connection, std::shared_ptr<void>> open_reader(const fs::path& path) {
  try {
    connection db = connection::open(path, connection::open_mode::read_only);
    read_user_version(db); // the first read is where a missing -shm shows
    return {std::move(db), nullptr};
  } catch (const db_error&) {
    std::error_code ec;
    const auto wal = fs::file_size(path.string() + "-wal", ec);
    if (ec || wal == 0) {
      connection db = connection::open(path, connection::open_mode::read_only_immutable);
      read_user_version(db);
      return {std::move(db), nullptr};
    }
    fs::path copy;
    auto keep = private_copy(path, copy);
    return {connection::open(copy, connection::open_mode::read_only), std::move(keep)};
  }
}

} // namespace

store store::open_read_only(const fs::path& path) {
  check_path(path, true);
  auto [db, keep] = open_reader(path);
  const int version = read_user_version(db);
  require_not_newer(db, version, schema_version);
  if (version == 0)
    throw db_error(
        fmt::format("database '{}' is not a kerneljudge database (schema version 0)", path.string()));
  if (version < schema_version)
    throw db_error(
        fmt::format("database '{}' has schema version {}, older than this build's {}; migrate it with "
                    "`kj db migrate --db {}` (any kj command that records results also does)",
                    path.string(), version, schema_version, path.string()));
  return store(std::make_unique<impl>(impl{std::move(db), path, std::move(keep)}));
}

store::batch::batch(store& s) : m_tx(std::make_unique<sqlite::transaction>(s.m_impl->m_db)) {}
store::batch::~batch() = default;
void store::batch::commit() {
  m_tx->commit();
}

int store::file_version(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw db_error(fmt::format("cannot open database '{}': no such file", path.string()));
  return read_user_version(connection::open(path, connection::open_mode::read_only));
}

namespace {

// kj db copy replaces only a database kj made (its schema_migrations table): never a folder, another tool's
// SQLite file or any other file.
void require_replaceable(const fs::path& destination) {
  std::error_code ec;
  if (const fs::path folder = destination.parent_path(); !folder.empty() && !fs::is_directory(folder, ec))
    throw db_error(fmt::format("cannot copy to '{}': its folder {} does not exist (create it first)",
                               destination.string(), folder.string()));
  if (fs::is_symlink(destination, ec))
    throw db_error(fmt::format("cannot copy to '{}': it is a symbolic link (name the file it points to)",
                               destination.string()));
  if (!fs::exists(destination, ec)) return;
  if (!fs::is_regular_file(destination, ec))
    throw db_error(fmt::format("cannot copy to '{}': it exists and is not a file", destination.string()));
  bool ours = false;
  try {
    connection db = connection::open(destination, connection::open_mode::read_only);
    ours = db.query_int64("SELECT count(*) FROM sqlite_master WHERE name = 'schema_migrations'",
                          "read the schema") > 0;
  } catch (const db_error&) {
  }
  if (!ours)
    throw db_error(
        fmt::format("cannot copy to '{}': it exists and is not a kerneljudge database; kj replaces "
                    "only its own databases (remove it, or name a new file)",
                    destination.string()));
}

} // namespace

void store::copy_to(const fs::path& destination) const {
  std::error_code same;
  if (fs::equivalent(m_impl->m_path, destination, same))
    throw db_error(fmt::format("cannot copy '{}' to '{}': that is the database itself (name another file)",
                               m_impl->m_path.string(), destination.string()));
  require_replaceable(destination);
  // A name of kj's own beside the destination, removed whatever happens: nothing else there is touched.
  const fs::path tmp = fmt::format("{}.kj-copy-{}.tmp", destination.string(), ::getpid());
  std::error_code ec;
  try {
    m_impl->m_db.prepare("VACUUM INTO ?", fmt::format("copy to '{}'", destination.string()))
        .bind_all(tmp.string())
        .run();
  } catch (const db_error&) {
    fs::remove(tmp, ec);
    throw;
  }
  fs::rename(tmp, destination, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    throw db_error(fmt::format("cannot copy to '{}': {}", destination.string(), why));
  }
}

int store::user_version() const {
  return read_user_version(m_impl->m_db);
}
const fs::path& store::path() const {
  return m_impl->m_path;
}

std::int64_t store::upsert_stack(const stack_record& stack) {
  connection& db = m_impl->m_db;
  if (stack.stack_hash.empty()) db.fail("upsert stack", "stack_hash is empty");
  db.prepare("INSERT INTO stacks (stack_hash, python, torch, device_name, fingerprint_json, created_at) "
             "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (stack_hash) DO NOTHING",
             fmt::format("insert stack {}", stack.stack_hash))
      .bind_all(stack.stack_hash, stack.python, stack.torch, stack.device_name, stack.fingerprint_json,
                core::now_iso8601())
      .run();
  auto find = db.prepare("SELECT id FROM stacks WHERE stack_hash = ?", "find stack");
  find.bind_all(stack.stack_hash);
  if (!find.step()) db.fail("upsert stack", "the row vanished after insertion");
  return find.column_int64(0);
}

std::int64_t store::upsert_problem(const problem_record& problem) {
  connection& db = m_impl->m_db;
  const std::string hash =
      problem.source_hash.empty() ? core::sha256_hex(problem.source) : problem.source_hash;
  const std::string what = fmt::format("upsert problem {}/{}/level {}/{}", problem.suite, problem.kb_version,
                                       problem.level, problem.file_name);
  db.prepare(
        "INSERT INTO problems (suite, kb_version, level, number, name, file_name, path, source, source_hash, "
        "source_commit, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (suite, kb_version, level, file_name, source_hash) DO NOTHING",
        what)
      .bind_all(problem.suite, problem.kb_version, problem.level, problem.number, problem.name,
                problem.file_name, problem.path, problem.source, hash, problem.source_commit,
                core::now_iso8601())
      .run();
  auto find = db.prepare("SELECT id FROM problems WHERE suite = ? AND kb_version = ? AND level = ? "
                         "AND file_name = ? AND source_hash = ?",
                         what);
  find.bind_all(problem.suite, problem.kb_version, problem.level, problem.file_name, hash);
  if (!find.step()) db.fail(what, "the row vanished after insertion");
  return find.column_int64(0);
}

std::int64_t store::upsert_candidate(const candidate_record& candidate) {
  connection& db = m_impl->m_db;
  const std::string hash = !candidate.source_hash.empty()   ? candidate.source_hash
                           : candidate.source_bytes.empty() ? core::sha256_hex(candidate.source)
                                                            : core::sha256_hex(candidate.source_bytes);
  const std::string what = fmt::format("upsert candidate (problem {}, producer '{}', sample {})",
                                       candidate.problem_id, candidate.producer, candidate.sample);
  db.prepare("INSERT INTO candidates (problem_id, producer, sample, path, source, source_hash, created_at, "
             "source_bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
             "ON CONFLICT (problem_id, producer, sample, source_hash) DO NOTHING",
             what)
      .bind_all(candidate.problem_id, candidate.producer, candidate.sample, candidate.path, candidate.source,
                hash, core::now_iso8601(), sqlite::blob{candidate.source_bytes})
      .run();
  auto find = db.prepare(
      "SELECT id FROM candidates WHERE problem_id = ? AND producer = ? AND sample = ? AND source_hash = ?",
      what);
  find.bind_all(candidate.problem_id, candidate.producer, candidate.sample, hash);
  if (!find.step()) db.fail(what, "the row vanished after insertion");
  return find.column_int64(0);
}

std::int64_t store::create_run(const run_record& run) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("create run '{}'", run.run_uid);
  if (run.run_uid.empty()) db.fail(what, "run_uid is empty");
  db.prepare("INSERT INTO runs (run_uid, created_at, status, device, command_line, kj_version, config_json, "
             "stack_id, producer, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
             what)
      .bind_all(run.run_uid, run.created_at.empty() ? core::now_iso8601() : run.created_at, run.status,
                run.device, run.command_line, run.kj_version, run.config_json, id_or_null(run.stack_id),
                run.producer, run.detail)
      .run();
  return db.last_insert_rowid();
}

std::optional<std::int64_t> store::find_run(const std::string& run_uid) const {
  auto find =
      m_impl->m_db.prepare("SELECT id FROM runs WHERE run_uid = ?", fmt::format("find run '{}'", run_uid));
  find.bind_all(run_uid);
  if (!find.step()) return std::nullopt;
  return find.column_int64(0);
}

std::optional<run_record> store::get_run(std::int64_t run_id) const {
  auto get = m_impl->m_db.prepare("SELECT run_uid, created_at, status, device, command_line, kj_version, "
                                  "config_json, stack_id, producer, detail FROM runs WHERE id = ?",
                                  fmt::format("read run {}", run_id));
  get.bind_all(run_id);
  if (!get.step()) return std::nullopt;
  run_record run;
  run.run_uid = get.column_text(0);
  run.created_at = get.column_text(1);
  run.status = get.column_text(2);
  run.device = get.column_text(3);
  run.command_line = get.column_text(4);
  run.kj_version = get.column_text(5);
  run.config_json = get.column_text(6);
  run.stack_id = get.column_int64(7); // NULL reads as 0
  run.producer = get.column_text(8);
  run.detail = get.column_text(9);
  return run;
}

std::optional<std::string> store::latest_run_uid() const {
  auto latest = m_impl->m_db.prepare("SELECT run_uid FROM runs ORDER BY created_at DESC, id DESC LIMIT 1",
                                     "find the latest run");
  if (!latest.step()) return std::nullopt;
  return latest.column_text(0);
}

void store::set_run_status(std::int64_t run_id, const std::string& status) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("set the status of run {} to '{}'", run_id, status);
  db.prepare("UPDATE runs SET status = ? WHERE id = ?", what).bind_all(status, run_id).run();
  if (db.changes() != 1) db.fail(what, "no such run");
}

void store::set_run_stack(std::int64_t run_id, std::int64_t stack_id) {
  connection& db = m_impl->m_db;
  const std::string what = fmt::format("set the stack of run {} to {}", run_id, stack_id);
  db.prepare("UPDATE runs SET stack_id = ? WHERE id = ?", what).bind_all(id_or_null(stack_id), run_id).run();
  if (db.changes() != 1) db.fail(what, "no such run");
}

std::vector<run_part_record> store::run_parts(std::int64_t run_id) const {
  auto rows =
      m_impl->m_db.prepare("SELECT shard, created_at, status, command_line, source_file, evaluations, "
                           "merged_at FROM run_parts WHERE run_id = ? ORDER BY shard, created_at",
                           fmt::format("read the parts of run {}", run_id));
  rows.bind_all(run_id);
  std::vector<run_part_record> parts;
  while (rows.step())
    parts.push_back({rows.column_text(0), rows.column_text(1), rows.column_text(2), rows.column_text(3),
                     rows.column_text(4), rows.column_int64(5), rows.column_text(6)});
  return parts;
}

} // namespace kj::db
