// `kj history`: one problem's timings across runs, stacks and dates.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"
#include "reports/history.hpp"

#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::cli {

action add_history_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("history", "One problem's timings across runs, stacks and dates");
  struct state {
    std::string problem, db = default_db_path(), producer, format = "table";
  };
  auto s = std::make_shared<state>();
  cmd->add_option("PROBLEM", s->problem,
                  "LEVEL:ID (e.g. 1:19), a file name (19_ReLU.py), its stem or its name")
      ->required();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--producer", s->producer, "only this producer's candidates");
  cmd->add_option("--format", s->format, "table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  return [s] {
    const db::store store = db::store::open_read_only(s->db);
    std::vector<reports::history_entry> entries;
    try {
      entries = reports::history(store, s->problem, s->producer, {}, {});
    } catch (const std::invalid_argument& e) {
      throw usage_error(e.what());
    }
    if (s->format == "json")
      std::cout << reports::history_json(entries).dump(2) << "\n";
    else if (s->format == "csv")
      std::cout << reports::history_csv(entries);
    else
      std::cout << reports::history_text(entries);
    return 0;
  };
}

} // namespace kj::cli
