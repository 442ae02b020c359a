// `kj compare BASE HEAD`: per-problem regression calls, exit 1 on regression; --calibrate measures the
// false-alarm and detection rates on an A/A pair.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"
#include "reports/compare.hpp"

#include <fmt/core.h>
#include <fstream>
#include <iostream>
#include <memory>

namespace kj::cli {

namespace {

struct compare_state {
  std::string base, head;
  std::string db = default_db_path();
  std::string base_db, head_db;
  std::string format = "text";
  std::string markdown, json, html;
  reports::compare_options options;
  bool calibrate = false;
  std::vector<double> inject = {0.05};
  int rounds = 5;
};

int run_compare(const compare_state& s) {
  if (s.base == s.head && s.base_db == s.head_db)
    fmt::print(
        stderr,
        "kj: warning: BASE and HEAD are the same ({}): every problem is compared with itself (two runs "
        "compare; the same run id in two databases needs --base-db and --head-db)\n",
        s.base);
  const db::store base_store = db::store::open_read_only(s.base_db.empty() ? s.db : s.base_db);
  const db::store head_store = db::store::open_read_only(s.head_db.empty() ? s.db : s.head_db);
  reports::metric_options metrics;
  metrics.intervals = false; // compare draws its own intervals of the ratio
  reports::compare_side base_side, head_side;
  std::vector<reports::result_row> base, head;
  try {
    base = reports::select_rows(base_store, s.base, metrics, base_side);
    head = reports::select_rows(head_store, s.head, metrics, head_side);
  } catch (const std::invalid_argument& e) {
    throw usage_error(e.what());
  }
  if (s.calibrate) {
    reports::calibration_options copts;
    copts.slowdowns = s.inject;
    copts.rounds = s.rounds;
    auto cal = reports::calibrate(base, head, s.options, copts);
    cal.aa.base = base_side;
    cal.aa.head = head_side;
    const std::string text = reports::calibration_text(cal);
    if (!s.json.empty()) write_text_file(s.json, reports::calibration_json(cal).dump(2) + "\n", "--json");
    if (!s.markdown.empty()) write_text_file(s.markdown, "```\n" + text + "```\n", "--markdown");
    if (s.format == "json")
      std::cout << reports::calibration_json(cal).dump(2) << "\n";
    else
      std::cout << text;
    return cal.passed() ? 0 : 1;
  }
  auto c = reports::compare(base, head, s.options);
  c.base = base_side;
  c.head = head_side;
  if (!s.markdown.empty()) write_text_file(s.markdown, reports::compare_markdown(c), "--markdown");
  if (!s.json.empty()) write_text_file(s.json, reports::compare_json(c).dump(2) + "\n", "--json");
  if (!s.html.empty()) write_text_file(s.html, reports::compare_html(c), "--html");
  if (s.format == "markdown")
    std::cout << reports::compare_markdown(c);
  else if (s.format == "json")
    std::cout << reports::compare_json(c).dump(2) << "\n";
  else if (s.format == "html")
    std::cout << reports::compare_html(c);
  else
    std::cout << reports::compare_text(c);
  if (c.rows.empty() && !c.failed()) { // a CI gate must not pass on a comparison of nothing
    fmt::print(stderr, "kj: {} and {} have no problem in common: nothing was compared (exit 2)\n", s.base,
               s.head);
    return 2;
  }
  return c.failed() ? 1 : 0;
}

} // namespace

action add_compare_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("compare", "Compare two runs, producers or stacks problem by problem; exit code 1 "
                                    "when anything regressed, 2 when nothing could be compared");
  auto s = std::make_shared<compare_state>();
  cmd->add_option("BASE", s->base,
                  "the reference side: a run id, 'latest', or KEY=VALUE,... with keys run, producer, stack "
                  "(a stack-hash prefix)")
      ->required();
  cmd->add_option("HEAD", s->head, "the side under test, same form as BASE")->required();
  cmd->add_option("--db", s->db, "SQLite file of both sides")->capture_default_str();
  cmd->add_option("--base-db", s->base_db, "SQLite file of BASE (default: --db)");
  cmd->add_option("--head-db", s->head_db, "SQLite file of HEAD (default: --db)");
  cmd->add_option("--format", s->format, "what to print: text, markdown, json or html")
      ->check(CLI::IsMember({"text", "markdown", "json", "html"}))
      ->capture_default_str();
  cmd->add_option("--markdown", s->markdown, "also write Markdown (a CI comment) to this file");
  cmd->add_option("--json", s->json, "also write JSON to this file");
  cmd->add_option("--html", s->html, "also write a self-contained HTML page to this file");
  cmd->add_option("--min-effect", s->options.min_effect, "smallest relative change ever called (0.03: 3%)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--alpha", s->options.alpha, "Benjamini–Hochberg false discovery rate")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--replicates", s->options.bootstrap.replicates, "bootstrap replicates per interval")
      ->check(CLI::Range(100, 100000))
      ->capture_default_str();
  cmd->add_flag(
      "--calibrate", s->calibrate,
      "BASE and HEAD are two runs of unchanged kernels (A/A): print the false-alarm rate, then inject "
      "--inject slowdowns into HEAD's samples and print the detection rate; exit 1 unless <= 1% and >= 90%");
  cmd->add_option("--inject", s->inject, "--calibrate: slowdowns to inject, e.g. 0.05,0.10")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--rounds", s->rounds, "--calibrate: rounds; each injects into every n-th problem")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  return [s] { return run_compare(*s); };
}

} // namespace kj::cli
