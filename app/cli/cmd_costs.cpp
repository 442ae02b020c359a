// `kj costs`: what a run's LLM calls cost, per model, and the price rows to check again.
#include "adapters/generate/accounting.hpp"
#include "adapters/llm/prices.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kj::cli {

action add_costs_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("costs", "Tokens, cost and cost per solved problem of a run's LLM calls, per model");
  struct state {
    std::string db = default_db_path();
    std::string run;
    std::string format = "table";
    std::string prices;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--run", s->run, "run id, or latest (the default)");
  cmd->add_option("--format", s->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--prices", s->prices,
                  "price table whose rows older than 90 days are named (default: adapters/prices.json, or "
                  "$KJ_PRICES)");
  return [s] {
    const db::store store = db::store::open_read_only(s->db);
    const std::string run = run_or_latest(store, s->run, s->db);
    const auto rows = store.llm_costs(run);
    std::optional<llm::price_table> prices; // the costs stand without it: only the price ages need it
    try {
      prices = llm::price_table::load(s->prices.empty() ? llm::price_table::default_path()
                                                        : std::filesystem::path(s->prices));
    } catch (const llm::price_error& e) {
      fmt::print(stderr, "kj: {}\n", e.what());
    }
    if (s->format == "json") {
      std::cout << nlohmann::json{{"run", run},
                                  {"models", adapters::cost_json(rows)},
                                  {"prices",
                                   prices ? adapters::price_age_json(*prices, rows) : nlohmann::json()}}
                       .dump(2)
                << "\n";
      return 0;
    }
    if (rows.empty()) { // no model of this run has a price to check
      fmt::print("run {} made no LLM calls\n", run);
      return 0;
    }
    adapters::write_cost_table(rows, std::cout);
    if (prices) adapters::write_price_age(*prices, rows, std::cout);
    return 0;
  };
}

} // namespace kj::cli
