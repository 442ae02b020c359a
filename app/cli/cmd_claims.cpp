// `kj claims`: a published set's claims (claims.json from `kj import`) beside a run's measurements.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"
#include "reports/claims.hpp"
#include "reports/metrics.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace kj::cli {

action add_claims_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "claims", "Put a published set's claimed speedups (claims.json, from kj import) beside a run's "
                "measurements, per problem and per level, with the reason for every difference");
  struct state {
    std::string claims;
    std::string db = default_db_path();
    std::vector<std::string> runs;
    std::string format = "table";
  };
  auto s = std::make_shared<state>();
  cmd->add_option("claims", s->claims, "the claims.json kj import wrote")->required();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option(
         "--run", s->runs,
         "the run that judged the imported kernels, or latest (the default); repeated, a later run's "
         "evaluation of a kernel replaces an earlier run's (a rerun after a fix)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--format", s->format, "table, markdown (for docs/) or json")
      ->check(CLI::IsMember({"table", "markdown", "json"}))
      ->capture_default_str();
  return [s] {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(s->claims, ec)) {
      fmt::print(
          stderr, "kj claims: {}: not a file (expected the claims.json kj import wrote{})\n", s->claims,
          std::filesystem::is_directory(s->claims, ec) ? ": a folder was given, name its claims.json" : "");
      return 2;
    }
    std::ifstream in(s->claims);
    const nlohmann::json claims = nlohmann::json::parse(in, nullptr, false);
    if (!in.is_open() || claims.is_discarded()) {
      fmt::print(stderr,
                 "kj claims: {}: cannot be read as JSON (expected the claims.json kj import writes)\n",
                 s->claims);
      return 2;
    }
    const db::store store = db::store::open_read_only(s->db);
    std::string run;
    std::vector<reports::result_row> rows; // a kernel's newest evaluation counts (reports/claims.cpp: match)
    for (const std::string& named : s->runs.empty() ? std::vector<std::string>{""} : s->runs) {
      const std::string uid = run_or_latest(store, named, s->db);
      run += (run.empty() ? "" : "+") + uid;
      for (auto& r : reports::results(store, uid))
        rows.push_back(std::move(r));
    }
    std::string device;
    if (!rows.empty())
      if (const auto stack = store.get_stack(rows.front().stack_id)) device = stack->device_name;
    try {
      const auto comparison = reports::compare_claims(claims, rows, run, device);
      if (s->format == "json")
        std::cout << reports::claims_json(comparison).dump(2) << "\n";
      else if (s->format == "markdown")
        reports::write_claims_markdown(comparison, std::cout);
      else
        reports::write_claims_table(comparison, std::cout);
      const bool none = std::none_of(comparison.rows.begin(), comparison.rows.end(),
                                     [](const reports::claim_row& r) { return !r.verdict.empty(); });
      if (none) { // the wrong run, or another reference: nothing above is a measurement (review 12 U11)
        fmt::print(stderr,
                   "kj claims: run {} judged none of the release's kernels on the release's references (the "
                   "why column says what it judged instead); name the run that did with --run\n",
                   run);
        return 2;
      }
    } catch (const std::invalid_argument& e) {
      fmt::print(stderr, "kj claims: {}: {}\n", s->claims, e.what());
      return 2;
    }
    return 0;
  };
}

} // namespace kj::cli
