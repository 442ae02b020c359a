// `kj db`: a database's schema and counts (info), its migration, and a consistent copy.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"

#include <fmt/core.h>
#include <memory>
#include <string>

namespace kj::cli {

action add_db_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "db", "Inspect the database (info), bring it to this kj's schema (migrate), copy it safely (copy)");
  cmd->require_subcommand(1);
  auto* info = cmd->add_subcommand("info", "Schema version and row counts");
  auto db_path = std::make_shared<std::string>(default_db_path());
  info->add_option("--db", *db_path, "SQLite file to read")->capture_default_str();
  auto* migrate = cmd->add_subcommand(
      "migrate",
      "Bring a database to this kj's schema version (any writing command also does; kj merge needs "
      "its inputs migrated)");
  migrate->add_option("--db", *db_path, "SQLite file to migrate")->capture_default_str();
  auto* copy = cmd->add_subcommand(
      "copy", "Write a consistent single-file copy of a database, also while kj writes it (e.g. to save a "
              "shard's local DB to shared storage)");
  copy->add_option("--db", *db_path, "SQLite file to copy")->capture_default_str();
  auto copy_to = std::make_shared<std::string>();
  copy->add_option("-o,--to", *copy_to,
                   "the copy (a kj database there is replaced; any other file is refused)")
      ->required();
  return [db_path, info, migrate, copy, copy_to] {
    if (copy->parsed()) {
      db::store::open_read_only(*db_path).copy_to(*copy_to);
      fmt::print("{}: copied to {}\n", *db_path, *copy_to);
      return 0;
    }
    if (migrate->parsed()) {
      const int before = db::store::file_version(*db_path);
      const db::store store = db::store::open(*db_path);
      fmt::print("{}: schema version {} -> {}\n", *db_path, before, store.user_version());
      return 0;
    }
    if (!info->parsed()) return 0;
    const db::store store = db::store::open_read_only(*db_path);
    const db::db_info i = store.info();
    fmt::print(
        "database        {}\nschema version  {} (this kj writes {})\nruns            {}\nstacks          {}\n"
        "problems        {}\ncandidates      {}\nevaluations     {}\ntiming samples  {}\n",
        i.path.string(), i.schema_version, db::schema_version, i.runs, i.stacks, i.problems, i.candidates,
        i.evaluations, i.timing_samples);
    return 0;
  };
}

} // namespace kj::cli
