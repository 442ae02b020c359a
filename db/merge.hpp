// `kj merge`: combining kerneljudge databases (the shards of one run, runs from several machines) into one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace kj::db {

// What merging one file added to the output.
struct merge_report {
  std::filesystem::path source;
  // Rows added per table, in merge order (every table merge handles, zeros included).
  std::vector<std::pair<std::string, std::int64_t>> added;
  std::int64_t evaluations_present = 0; // evaluations of the source the output already held: skipped
  std::vector<std::string> run_uids;    // the runs the source holds, oldest first

  std::int64_t added_total() const;
  std::int64_t added_to(const std::string& table) const;
};

// Merges `source` into the database at `output` (created, or migrated forward, as `kj run` would) in one
// transaction; the source is only read. Rows are matched by their natural keys (stack hash; problem and
// candidate keys; run_uid; (run, candidate) for evaluations; build key; a baseline's cache key and creation
// time; an exchange's run, request hash, seq and start time), so merging a file again adds nothing; ids are
// the output's own. Runs with the same run_uid become one run, whose parts (run_parts) say which shards it
// holds. An evaluation the output already holds is kept as it is, and the source's copy skipped with its
// rows. Throws db_error naming the file when the source is missing, is not a kerneljudge database, is the
// output itself, or has another schema version than the output.
merge_report merge_database(const std::filesystem::path& output, const std::filesystem::path& source);

// The tables merge_database copies (all of this build's schema but schema_migrations, which describes each
// file's own history).
const std::vector<std::string>& merged_tables();

} // namespace kj::db
