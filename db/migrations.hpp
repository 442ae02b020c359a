// The ordered list of schema migrations and the code that applies them; see docs/schema.md for the policy.
#pragma once

#include "db/sqlite.hpp"

#include <span>

namespace kj::db {

// One step of the schema: applying `sql` to a database at version `version - 1` brings it to `version`.
struct migration {
  int version = 0;
  const char* description = "";
  const char* sql = "";
};

// Every migration of this build, in order: versions 1, 2, ... schema_version.
std::span<const migration> migrations();

// The database's PRAGMA user_version.
int read_user_version(const sqlite::connection& db);

// Throws db_error when `version` (the database's) is newer than `supported` (this build's).
void require_not_newer(const sqlite::connection& db, int version, int supported);

// Applies every pending migration of `steps` in one transaction and sets user_version to the last one's
// version. Throws db_error when the database is newer than the last step, or when a step fails (nothing is
// applied then).
void migrate(sqlite::connection& db, std::span<const migration> steps);
inline void migrate(sqlite::connection& db) {
  migrate(db, migrations());
}

} // namespace kj::db
