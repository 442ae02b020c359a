// `kj export`: a run's evaluations as KernelBench's eval_results.json or as JUnit XML.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"
#include "reports/export.hpp"
#include "reports/results_table.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace kj::cli {

action add_export_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "export", "Write a run's evaluations as KernelBench's eval_results.json (its analysis scripts read it) "
                "or as JUnit XML (one test case per evaluation, for CI dashboards)");
  struct state {
    std::string db = default_db_path();
    std::string run;
    std::string format;
    std::string out;
    std::optional<int> level;
    std::string producer;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--run", s->run, "run id, or latest (the default)");
  cmd->add_option("--format", s->format, "kernelbench (eval_results.json) or junit (XML)")
      ->check(CLI::IsMember({"kernelbench", "junit"}))
      ->required();
  cmd->add_option("-o,--out", s->out, "file to write (default: stdout)");
  cmd->add_option("--level", s->level, "only this level (kernelbench: its file holds one level)");
  cmd->add_option("--producer", s->producer, "only this producer's candidates");
  return [s] {
    const db::store store = db::store::open_read_only(s->db);
    const std::string run = run_or_latest(store, s->run, s->db);
    auto rows = reports::results(store, run);
    std::erase_if(rows, [&](const reports::result_row& r) {
      return (s->level && r.level != *s->level) || (!s->producer.empty() && r.producer != s->producer);
    });
    // A resume that judged an edited file again holds two evaluations of one sample: the newest is exported,
    // as kj report counts it.
    const std::size_t all = rows.size();
    rows = reports::newest_per_key(std::move(rows));
    if (rows.size() < all)
      fmt::print(stderr, "kj: {} older evaluations of a sample judged again (an edited file) are left out\n",
                 all - rows.size());
    if (rows.empty())
      throw usage_error(fmt::format("run {} has no evaluations to export (with these filters)", run));
    std::ostringstream text;
    try {
      if (s->format == "kernelbench")
        reports::write_kernelbench(rows, text);
      else
        reports::write_junit(rows, run, text);
    } catch (const std::invalid_argument& e) {
      throw usage_error(fmt::format("run {}: {}", run, e.what()));
    }
    if (s->out.empty()) {
      std::cout << text.str();
      return 0;
    }
    std::ofstream file(s->out, std::ios::binary);
    if (!(file << text.str()) || !file.flush())
      throw usage_error(fmt::format("-o {}: cannot write the file", s->out));
    const auto not_judged =
        s->format == "kernelbench"
            ? std::count_if(rows.begin(), rows.end(), [](const auto& r) { return !r.judged(); })
            : 0;
    fmt::print(
        stderr, "kj: {} evaluations of run {} written to {}{}\n", rows.size() - not_judged, run, s->out,
        not_judged ? fmt::format(" ({} not judged, kj's or the problem's failure, left out)", not_judged)
                   : std::string());
    return 0;
  };
}

} // namespace kj::cli
