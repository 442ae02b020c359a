// Thin RAII wrappers over the sqlite3 C API: a connection, prepared statements and a transaction guard.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

// Declared here so that users of the wrappers (tests included) do not need sqlite3.h on their include path.
struct sqlite3;
struct sqlite3_stmt;

namespace kj::db::sqlite {

class statement;
struct lock_waiter;

// Bytes bound as a BLOB (an empty one as NULL); column_text reads them back unchanged.
struct blob {
  std::string_view bytes;
};

// One open database handle. Every error it throws is a db_error naming the database file.
class connection {
public:
  // read_write_attach: read_write_create, and ATTACH takes `file:` URIs (kj merge attaches its inputs with
  // mode=ro, so that merging never writes to them).
  // read_only_immutable: read-only, and SQLite is told that nobody writes the file (no locks, no -shm): for a
  // file on a read-only mount whose WAL is empty.
  enum class open_mode { read_write_create, read_only, read_write_attach, read_only_immutable };

  // Throws db_error "cannot open database '<path>': <sqlite's reason>".
  static connection open(const std::filesystem::path& path, open_mode mode);

  connection(connection&& other) noexcept;
  connection& operator=(connection&& other) noexcept;
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  ~connection();

  // Runs SQL text (one or more statements) whose rows, if any, are not needed.
  void exec(std::string_view sql, std::string_view what);
  statement prepare(std::string_view sql, std::string_view what) const;
  // The single value of a query such as "PRAGMA user_version" or "SELECT count(*) ...".
  std::int64_t query_int64(std::string_view sql, std::string_view what) const;
  std::string query_text(std::string_view sql, std::string_view what) const;

  std::int64_t last_insert_rowid() const;
  int changes() const;
  bool in_transaction() const;
  // Whether the last call failed because another connection held the lock (SQLITE_BUSY).
  bool last_error_busy() const;

  // Throws db_error "database '<path>': <what>: <reason>"; reason defaults to sqlite's last error message.
  [[noreturn]] void fail(std::string_view what) const;
  [[noreturn]] void fail(std::string_view what, std::string_view reason) const;

  const std::string& path() const { return m_path; }
  sqlite3* handle() const { return m_db; }

private:
  connection(sqlite3* db, std::string path);
  sqlite3* m_db = nullptr;
  std::string m_path;
  std::unique_ptr<lock_waiter> m_waiter; // the busy handler's state (lock_wait.hpp)
};

// A prepared statement. Parameters are numbered from 1 and columns from 0, as in the C API.
class statement {
public:
  statement(sqlite3* db, std::string path, std::string what, std::string_view sql);
  statement(statement&& other) noexcept;
  statement& operator=(statement&& other) = delete;
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;
  ~statement();

  statement& bind(int index, std::int64_t value);
  statement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  statement& bind(int index, double value); // NaN is stored as NULL (SQLite has no NaN)
  statement& bind(int index, std::string_view value);
  statement& bind(int index, blob value);
  statement& bind(int index, std::nullopt_t);
  statement& bind(int index, const std::optional<std::int64_t>& value); // nullopt is NULL
  statement& bind(int index, const std::optional<double>& value);       // nullopt is NULL
  // Binds the values to parameters 1, 2, ... in order.
  template <class... Ts>
  statement& bind_all(const Ts&... values) {
    int index = 1;
    (bind(index++, values), ...);
    return *this;
  }

  // Advances; true while a row is available, false when done. Throws db_error on failure.
  bool step();
  // Steps a statement that returns no rows, then resets it (bindings cleared) for reuse.
  void run();
  void reset();

  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  int column_int(int column) const { return static_cast<int>(column_int64(column)); }
  double column_double(int column) const; // NULL reads back as NaN
  std::optional<double> column_optional_double(int column) const;
  std::string column_text(int column) const;

  // The same, by the column's name in the result (as the SELECT names it): a reader that names what it reads
  // cannot drift from its column list. An absent name throws db_error naming it.
  int column_index(std::string_view name) const;
  bool null(std::string_view name) const { return is_null(column_index(name)); }
  std::int64_t int64(std::string_view name) const { return column_int64(column_index(name)); }
  int integer(std::string_view name) const { return column_int(column_index(name)); }
  double real(std::string_view name) const { return column_double(column_index(name)); }
  std::optional<double> optional_real(std::string_view name) const {
    return column_optional_double(column_index(name));
  }
  std::string text(std::string_view name) const { return column_text(column_index(name)); }

private:
  [[noreturn]] void fail() const;
  sqlite3* m_db = nullptr;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_path;
  std::string m_what;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded. Inside another
// transaction it is a SAVEPOINT instead, released by commit() and rolled back to on destruction, so that the
// store's own multi-row writes can be grouped into a larger one (store::batch).
class transaction {
public:
  explicit transaction(connection& db);
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  ~transaction();
  void commit();

private:
  connection& m_db;
  bool m_nested = false;
  bool m_done = false;
};

} // namespace kj::db::sqlite
