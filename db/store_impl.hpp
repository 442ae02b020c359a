// The private state of kj::db::store, shared by the files that implement it.
#pragma once

#include "db/sqlite.hpp"
#include "db/store.hpp"

#include <cstdint>
#include <optional>

namespace kj::db {

struct store::impl {
  sqlite::connection m_db;
  std::filesystem::path m_path;
};

// Optional foreign keys are 0 in the records and NULL in the tables.
inline std::optional<std::int64_t> id_or_null(std::int64_t id) {
  return id == 0 ? std::nullopt : std::optional<std::int64_t>(id);
}

} // namespace kj::db
