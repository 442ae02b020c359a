// `kj results`: read the DB back, for people (table) and scripts (JSON, CSV).
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/verified_flags.hpp"
#include "core/verdict.hpp"
#include "db/store.hpp"
#include "reports/results_table.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <iostream>
#include <memory>

namespace kj::cli {

namespace {

// --verdict: each name a verdict kj writes or failed, passed, strict-fail.
void check_verdict_names(const std::string& verdicts) {
  for (std::size_t start = 0; start <= verdicts.size();) {
    const std::size_t end = std::min(verdicts.find(',', start), verdicts.size());
    const std::string name = verdicts.substr(start, end - start);
    if (!parse_verdict(name) && name != "failed" && name != "passed" && name != "strict-fail")
      throw usage_error(
          fmt::format("--verdict {}: '{}' is not a verdict (correct, incorrect, compile_error, "
                      "load_error, runtime_error, timeout, crashed, problem_error, harness_error, "
                      "oom, needs_weights, no_code) nor failed, passed or strict-fail",
                      verdicts, name));
    start = end + 1;
  }
}

} // namespace

action add_results_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("results", "Show one record per evaluation of a run");
  struct state {
    std::string db = default_db_path();
    std::string run;
    std::string format = "table";
    bool wide = false;
    bool verbose = false;
    std::string verdicts;
    verified_flags verified;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--run", s->run, "run id, or latest (the default)");
  std::vector<std::string> formats;
  std::string format_help;
  for (const auto& w : reports::results_writers()) {
    formats.emplace_back(w.name);
    format_help += fmt::format("{}{} ({})", format_help.empty() ? "" : ", ", w.name, w.help);
  }
  cmd->add_option("--format", s->format, format_help)->check(CLI::IsMember(formats))->capture_default_str();
  cmd->add_flag("-w,--wide", s->wide, "the table with nothing cut (--format wide)");
  cmd->add_flag("-v,--verbose", s->verbose, "a block per evaluation with its whole error (--format verbose)");
  cmd->add_option(
      "--verdict", s->verdicts,
      "only these verdicts, comma-separated, e.g. incorrect,timeout; also failed (judged and not "
      "counted correct: kj's and the problem's failures are not the candidate's), passed, strict-fail");
  s->verified.add_to(*cmd);
  return [s, cmd] {
    if (!s->verdicts.empty()) check_verdict_names(s->verdicts);
    db::store store = db::store::open_read_only(s->db);
    const std::string run = run_or_latest(store, s->run, s->db);
    auto rows = reports::results(store, run);
    const std::size_t evaluations = rows.size();
    if (const auto adjust = s->verified.adjuster()) adjust(rows);
    const bool none_verified = rows.empty() && evaluations > 0; // --problems verified left nothing
    if (none_verified)
      fmt::print(stderr, "kj: run {} has {} evaluations, none of a problem the verified set calls sound\n",
                 run, evaluations);
    if (!s->verdicts.empty())
      std::erase_if(rows,
                    [&](const reports::result_row& r) { return !reports::verdict_matches(r, s->verdicts); });
    // -w and -v shape the table; a --format given on the command line (json, csv, ...) wins over them and
    // over a kj.toml's wide/verbose, so a script always gets what it asked for.
    const bool format_given = cmd->get_option("--format")->count() > 0 && s->format != "table";
    const std::string format = format_given ? s->format
                               : s->verbose ? "verbose"
                               : s->wide    ? "wide"
                                            : s->format;
    const reports::results_writer& writer = reports::results_writer_named(format);
    writer.write(rows, std::cout);
    if (rows.empty() && !none_verified && !writer.for_scripts)
      fmt::print(stderr, "kj: run {} has no evaluations{}\n", run,
                 s->verdicts.empty() ? "" : " with these verdicts");
    return none_verified ? 2 : 0; // as kj report and kj problems: --problems verified left no problem
  };
}

} // namespace kj::cli
