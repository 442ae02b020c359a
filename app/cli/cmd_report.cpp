// `kj report`: the HTML/CSV/JSON report of one or more runs, from the DB alone.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/verified_flags.hpp"
#include "core/version.hpp"
#include "db/store.hpp"
#include "reports/report.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <fstream>
#include <memory>
#include <optional>
#include <set>

namespace kj::cli {
namespace {

// -o writes index.html, e/, CSV and JSON files: into a new or empty folder, or over a report of kj's, never
// over a folder of the user's own files.
void refuse_foreign_folder(const std::filesystem::path& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(out, ec) || fs::is_empty(out, ec)) return;
  std::string head(4096, '\0');
  std::ifstream in(out / "index.html", std::ios::binary);
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  if (head.find("kerneljudge report") != std::string::npos) return;
  throw usage_error(
      fmt::format("-o {}: holds files that kj report did not write{}; name a new or empty folder",
                  out.string(), fs::exists(out / "index.html", ec) ? " (an index.html among them)" : ""));
}

} // namespace

action add_report_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("report", "Write an HTML report (leaderboard, the paper's Table 1, per-problem "
                                   "table) with CSV and JSON, from the DB alone");
  struct state {
    std::string db = default_db_path();
    std::vector<std::string> runs;
    bool all_runs = false;
    std::string producer;
    std::string out;
    std::string chartjs;
    int replicates = 2000;
    verified_flags verified;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--run", s->runs, "run id, or latest (repeatable; default: the latest run)");
  cmd->add_flag("--all-runs", s->all_runs,
                "every run in the DB (the newest evaluation of each producer, problem and sample counts)");
  cmd->add_option("--producer", s->producer, "only this producer's candidates");
  cmd->add_option("-o,--out", s->out, "folder to write index.html, e/*.html, *.csv and report.json into")
      ->required();
  cmd->add_option(
      "--chartjs", s->chartjs,
      "Chart.js file (UMD build) to inline; default: $KJ_CHARTJS, then Debian/Ubuntu's libjs-chart.js");
  cmd->add_option("--replicates", s->replicates, "bootstrap replicates of every interval")
      ->check(CLI::Range(100, 100000))
      ->capture_default_str();
  s->verified.add_to(*cmd);
  return [s] {
    if (s->all_runs && !s->runs.empty()) throw usage_error("--run and --all-runs exclude each other");
    if (!s->chartjs.empty() && !std::filesystem::is_regular_file(s->chartjs))
      throw usage_error(fmt::format("--chartjs {}: no such file", s->chartjs));
    const db::store store = db::store::open_read_only(s->db);
    reports::report_options options;
    for (auto& run : s->runs) // 'latest', as kj compare takes it (a run of that id wins)
      if (run == "latest") run = run_or_latest(store, run, s->db);
    options.runs = s->runs;
    options.all_runs = s->all_runs;
    options.producer = s->producer;
    options.out_dir = s->out;
    options.chartjs = s->chartjs;
    options.kj_version = version_string();
    options.metrics.bootstrap.replicates = s->replicates;
    options.adjust_rows = s->verified.adjuster();
    reports::report_data data;
    try {
      data = reports::build_report(store, options);
    } catch (const std::invalid_argument& e) {
      throw usage_error(e.what());
    }
    if (data.rows.empty() && !options.producer.empty()) {
      options.producer.clear(); // which producers the runs do hold, to name them
      std::set<std::string> producers;
      for (const auto& row : reports::build_report(store, options).rows)
        producers.insert(row.producer);
      if (!producers.empty())
        throw usage_error(fmt::format("--producer {} matches no evaluation of the runs reported ({}); their "
                                      "producers: {}",
                                      s->producer,
                                      s->all_runs ? "all runs"
                                      : s->runs.empty()
                                          ? "the newest run, " + store.latest_run_uid().value_or("")
                                          : fmt::format("{}", fmt::join(s->runs, ", ")),
                                      fmt::join(producers, ", ")));
    }
    if (data.rows.empty()) {
      const auto latest = s->runs.empty() && !s->all_runs ? store.latest_run_uid() : std::nullopt;
      throw usage_error(latest ? fmt::format("the newest run of {}, {}, has no evaluations to report: name "
                                             "another with --run ID (kj runs lists them), or --all-runs",
                                             s->db, *latest)
                               : fmt::format("no evaluations to report in {}", s->db));
    }
    for (const auto& warning : data.warnings)
      fmt::print(stderr, "kj: warning: {}\n", warning);
    namespace fs = std::filesystem;
    if (std::error_code ec; fs::exists(s->out, ec) && !fs::is_directory(s->out, ec))
      throw usage_error(
          fmt::format("-o {}: a file of that name exists; kj report writes a folder (index.html, "
                      "e/, CSV and JSON files): name a folder",
                      s->out));
    if (const auto ext = fs::path(s->out).extension();
        (ext == ".html" || ext == ".htm") && !fs::exists(s->out))
      throw usage_error(
          fmt::format("-o {}: kj report writes a folder (index.html, e/, CSV and JSON files), not "
                      "one page: name a folder, e.g. -o {} (its index.html is the report)",
                      s->out, fs::path(s->out).replace_extension().string()));
    refuse_foreign_folder(s->out);
    reports::report_output output;
    try {
      output = reports::write_report(store, data, options);
    } catch (const fs::filesystem_error& e) {
      throw usage_error(fmt::format("-o {}: cannot write the report there: {} ({})", s->out,
                                    e.code().message(), e.path1().string()));
    }
    fmt::print("report of {} evaluations ({} runs) written to {} ({} files)\n", data.rows.size(),
               data.runs.size(), (std::filesystem::path(s->out) / "index.html").string(),
               output.files.size());
    if (output.chartjs.empty())
      fmt::print("charts left out: Chart.js not found (install libjs-chart.js or pass --chartjs FILE)\n");
    else
      fmt::print("charts: Chart.js inlined from {}\n", output.chartjs.string());
    return 0;
  };
}

} // namespace kj::cli
