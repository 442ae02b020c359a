// Implements the sqlite3 wrappers; the only file besides the migrations that includes sqlite3.h.
#include "db/sqlite.hpp"

#include "db/lock_wait.hpp"
#include "db/store.hpp"

#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <sqlite3.h>
#include <unistd.h>
#include <utility>

namespace kj::db::sqlite {

namespace {

// Why SQLite could not open a database file it had opened: its journal (-wal, -shm) goes beside it.
std::string folder_hint(const std::string& path) {
  const auto folder = std::filesystem::absolute(path).parent_path();
  return ::access(folder.c_str(), W_OK) == 0
             ? std::string()
             : fmt::format(
                   " (its folder {} is not writable, and SQLite keeps the database's journal beside it)",
                   folder.string());
}

// The reason of a failed call, with who holds the file when it was busy.
std::string reason_of(sqlite3* db, const std::string& path) {
  std::string reason = sqlite3_errmsg(db);
  if ((sqlite3_errcode(db) & 0xff) == SQLITE_BUSY) reason += busy_hint(path);
  if ((sqlite3_errcode(db) & 0xff) == SQLITE_CANTOPEN) reason += folder_hint(path);
  return reason;
}

} // namespace

connection::connection(sqlite3* db, std::string path)
    : m_db(db), m_path(std::move(path)), m_waiter(std::make_unique<lock_waiter>()) {
  m_waiter->path = m_path;
  // Another process's lock (a reader while the writer commits, a second kj): waited for, said on stderr.
  sqlite3_busy_handler(m_db, wait_for_lock, m_waiter.get());
}

connection connection::open(const std::filesystem::path& path, open_mode mode) {
  const std::string name = path.string();
  const bool reader = mode == open_mode::read_only || mode == open_mode::read_only_immutable;
  int flags =
      (reader ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX;
  std::string uri_name = name;
  if (mode == open_mode::read_write_attach) {
    flags |= SQLITE_OPEN_URI;
    if (uri_name.starts_with("file:")) uri_name = "./" + uri_name; // the path itself stays a path
  }
  if (mode == open_mode::read_only_immutable) {
    flags |= SQLITE_OPEN_URI;
    uri_name = "file:";
    for (const unsigned char c : std::filesystem::absolute(path).string())
      uri_name +=
          std::isalnum(c) || std::string_view("/._-~").find(static_cast<char>(c)) != std::string_view::npos
              ? std::string(1, static_cast<char>(c))
              : fmt::format("%{:02X}", c);
    uri_name += "?immutable=1";
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(uri_name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 allocates a handle even on failure, so that the message can be read from it.
    const std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    throw db_error(fmt::format("cannot open database '{}': {}", name, reason));
  }
  // SQLite silently falls back to read-only for a file it may not write; a writer must fail here instead.
  if (!reader && sqlite3_db_readonly(db, "main") == 1) {
    sqlite3_close_v2(db);
    throw db_error(fmt::format("cannot open database '{}': the file is not writable", name));
  }
  // A writer keeps its journal (-wal, -shm) beside the file: a folder it may not write fails later, and
  // vaguely.
  if (const std::string hint = reader ? std::string() : folder_hint(name); !hint.empty()) {
    sqlite3_close_v2(db);
    throw db_error(fmt::format("cannot open database '{}' to write it{}", name, hint));
  }
  sqlite3_extended_result_codes(db, 1);
  return connection(db, name);
}

connection::connection(connection&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)),
      m_waiter(std::move(other.m_waiter)) {}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(m_db);
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
    m_waiter = std::move(other.m_waiter);
  }
  return *this;
}

connection::~connection() {
  sqlite3_close_v2(m_db);
}

void connection::exec(std::string_view sql, std::string_view what) {
  const std::string text(sql);
  char* message = nullptr;
  if (sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string reason = message != nullptr ? message : sqlite3_errmsg(m_db);
    if ((sqlite3_errcode(m_db) & 0xff) == SQLITE_BUSY) reason += busy_hint(m_path);
    sqlite3_free(message);
    fail(what, reason);
  }
}

statement connection::prepare(std::string_view sql, std::string_view what) const {
  return statement(m_db, m_path, std::string(what), sql);
}

std::int64_t connection::query_int64(std::string_view sql, std::string_view what) const {
  statement s = prepare(sql, what);
  if (!s.step()) fail(what, "the query returned no row");
  return s.column_int64(0);
}

std::string connection::query_text(std::string_view sql, std::string_view what) const {
  statement s = prepare(sql, what);
  if (!s.step()) fail(what, "the query returned no row");
  return s.column_text(0);
}

std::int64_t connection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(m_db);
}
int connection::changes() const {
  return sqlite3_changes(m_db);
}
bool connection::last_error_busy() const {
  return (sqlite3_errcode(m_db) & 0xff) == SQLITE_BUSY;
}
bool connection::in_transaction() const {
  return sqlite3_get_autocommit(m_db) == 0;
}

void connection::fail(std::string_view what) const {
  fail(what, reason_of(m_db, m_path));
}

void connection::fail(std::string_view what, std::string_view reason) const {
  throw db_error(fmt::format("database '{}': {}: {}", m_path, what, reason));
}

statement::statement(sqlite3* db, std::string path, std::string what, std::string_view sql)
    : m_db(db), m_path(std::move(path)), m_what(std::move(what)) {
  if (sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &m_stmt, nullptr) != SQLITE_OK)
    fail();
}

statement::statement(statement&& other) noexcept
    : m_db(other.m_db), m_stmt(std::exchange(other.m_stmt, nullptr)), m_path(std::move(other.m_path)),
      m_what(std::move(other.m_what)) {}

statement::~statement() {
  sqlite3_finalize(m_stmt);
}

void statement::fail() const {
  throw db_error(fmt::format("database '{}': {}: {}", m_path, m_what, reason_of(m_db, m_path)));
}

statement& statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(m_stmt, index, value) != SQLITE_OK) fail();
  return *this;
}

statement& statement::bind(int index, double value) {
  const int rc =
      std::isnan(value) ? sqlite3_bind_null(m_stmt, index) : sqlite3_bind_double(m_stmt, index, value);
  if (rc != SQLITE_OK) fail();
  return *this;
}

statement& statement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8) !=
      SQLITE_OK)
    fail();
  return *this;
}

statement& statement::bind(int index, blob value) {
  if (value.bytes.empty()) return bind(index, std::nullopt);
  if (sqlite3_bind_blob64(m_stmt, index, value.bytes.data(), value.bytes.size(), SQLITE_TRANSIENT) !=
      SQLITE_OK)
    fail();
  return *this;
}

statement& statement::bind(int index, std::nullopt_t) {
  if (sqlite3_bind_null(m_stmt, index) != SQLITE_OK) fail();
  return *this;
}

statement& statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind(index, std::nullopt);
}

statement& statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind(index, std::nullopt);
}

bool statement::step() {
  const int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail();
}

void statement::run() {
  while (step()) {
  }
  reset();
}

void statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

bool statement::is_null(int column) const {
  return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

std::int64_t statement::column_int64(int column) const {
  return sqlite3_column_int64(m_stmt, column);
}

double statement::column_double(int column) const {
  return is_null(column) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(m_stmt, column);
}

std::optional<double> statement::column_optional_double(int column) const {
  if (is_null(column)) return std::nullopt;
  return sqlite3_column_double(m_stmt, column);
}

int statement::column_index(std::string_view name) const {
  for (int i = 0, n = sqlite3_column_count(m_stmt); i < n; ++i)
    if (const char* column = sqlite3_column_name(m_stmt, i); column != nullptr && name == column) return i;
  throw db_error(fmt::format("database '{}': {}: the query has no column named '{}'", m_path, m_what, name));
}

std::string statement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(m_stmt, column));
  if (text == nullptr) return {};
  return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, column)));
}

transaction::transaction(connection& db) : m_db(db), m_nested(db.in_transaction()) {
  m_db.exec(m_nested ? "SAVEPOINT kj_nested" : "BEGIN IMMEDIATE", "begin transaction");
}

transaction::~transaction() {
  // Some errors (SQLITE_FULL, SQLITE_IOERR) already rolled the transaction back; ROLLBACK would then fail.
  if (m_done || !m_db.in_transaction()) return;
  sqlite3_exec(m_db.handle(), m_nested ? "ROLLBACK TO kj_nested; RELEASE kj_nested" : "ROLLBACK", nullptr,
               nullptr, nullptr);
}

void transaction::commit() {
  m_db.exec(m_nested ? "RELEASE kj_nested" : "COMMIT", "commit transaction");
  m_done = true;
}

} // namespace kj::db::sqlite
