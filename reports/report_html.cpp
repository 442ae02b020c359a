// index.html of `kj report`: provenance header, leaderboard, charts, Table 1 and the per-problem table. Every
// text that came from a producer, a problem or a run goes through html::escape.
#include "reports/html.hpp"
#include "reports/report.hpp"
#include "reports/report_sections.hpp"

#include <fmt/format.h>
#include <map>

namespace kj::reports::detail {

namespace {

// "—" with the reason it is blank as its tooltip.
std::string blank(const std::string& why) {
  return "<span title=\"" + html::escape(why) + "\">" + html::missing + "</span>";
}

std::string percent_or(const std::optional<double>& v, const char* why) {
  return v ? html::percent(v) : blank(why);
}

const char* const k_no_trace = "measured only on CUDA, from the candidate's kernel trace";
const char* const k_none_judged =
    "no evaluation of this group was judged: each was kj's own failure "
    "(harness_error) or the problem's (problem_error), counted under \"not judged\"";

// Why an evaluation has no timing: kj or the problem failed (not judged), or the candidate did, or timing was
// off.
std::string not_timed(const result_row& r) {
  return blank(!r.judged() ? "not judged: the problem failed (problem_error) or kj did (harness_error); the "
                             "candidate was not timed and is not counted against"
                           : "not timed: the candidate failed its checks, or timing was off");
}

std::string level_label(int level) {
  return level == all_levels ? "all" : fmt::format("L{}", level);
}

std::string runs_section(const report_data& data) {
  std::string out = "<h2 id=\"provenance\">Where these numbers come from</h2>\n<p class=\"prov\">";
  out += fmt::format("Database <code>{}</code>; report written {} by kj {}. Every number below is computed "
                     "from that file alone: each row links to its evaluation page, which names the DB rows "
                     "(timings, samples, baselines) and the stack behind it.</p>\n",
                     html::escape(data.db_path.string()), html::escape(data.generated_at),
                     html::escape(data.kj_version));
  out += "<table><tr><th class=\"l\">run</th><th class=\"l\">created</th><th class=\"l\">status</th>"
         "<th class=\"l\">device</th><th class=\"l\">stack</th><th>evaluations</th>"
         "<th class=\"l\">command</th></tr>\n";
  for (const auto& r : data.runs)
    out += fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td>"
                       "<td class=\"l\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td>"
                       "<td class=\"l\"><code>{}</code></td></tr>\n",
                       html::escape(r.run_uid), html::escape(r.created_at), html::escape(r.status),
                       html::escape(r.device), html::escape(r.stack_hash), r.evaluations,
                       html::escape(r.command_line));
  out += "</table>\n" + stacks_table(data);
  return out;
}

// Three cells per baseline: faster, faster noise-aware, geomean (correct only, and with failures as 1).
std::string baseline_cells(const baseline_column& c) {
  if (c.with_speedup == 0)
    return fmt::format(
        "<td>{0}</td><td>{0}</td><td>{0}</td>",
        blank("no evaluation of this group has a speedup against this baseline: none was timed "
              "correct, or the baseline was not measured with the run's timing options"));
  return fmt::format("<td>{}</td><td>{}</td><td>{}<br><span class=\"ci\">{}</span></td>",
                     html::percent(c.faster.value()), html::percent(c.faster_noise_aware.value()),
                     html::ratio(c.geomean_correct), html::ratio(c.geomean_all));
}

// Eager and best always; a compiled mode when some evaluation has a speedup against it.
std::vector<std::string> shown_baselines(const report_data& data) {
  std::vector<std::string> shown;
  for (const auto& b : leaderboard_baselines) {
    bool any = b == "eager" || b == "best";
    for (const auto& row : data.board)
      any = any || row.column(b).with_speedup > 0;
    if (any) shown.push_back(b);
  }
  return shown;
}

std::string leaderboard_section(const report_data& data) {
  const auto baselines = shown_baselines(data);
  std::map<std::int64_t, const result_row*> by_id;
  for (const auto& r : data.rows)
    by_id[r.evaluation_id] = &r;
  std::string out =
      "<h2 id=\"leaderboard\">Leaderboard</h2>\n<p class=\"prov\">Per producer and level. "
      "Rates are over the judged evaluations (a candidate's failure counts against it; kj's own "
      "failures and a problem's, \"not judged\", count nowhere); \"correct\" means the "
      "compatible verdict is correct and the strict verdict did not fail. Noise-aware: faster only "
      "when the 95% bootstrap interval of the speedup lies above 1. Hover a row for its "
      "provenance; <a href=\"leaderboard.csv\">leaderboard.csv</a> has every baseline (columns "
      "of baselines nothing was measured against are left out here).</p>\n"
      "<table><tr><th class=\"l\" rowspan=\"2\">producer</th><th rowspan=\"2\">level</th>"
      "<th rowspan=\"2\">evaluations</th><th rowspan=\"2\">pass<br>compatible</th>"
      "<th rowspan=\"2\">pass<br>strict</th>";
  for (const auto& b : baselines)
    out += fmt::format("<th colspan=\"3\">vs {}</th>", html::escape(b));
  out += "<th rowspan=\"2\">tokens /<br>solved</th><th rowspan=\"2\">cost /<br>solved</th>"
         "<th rowspan=\"2\">crashed</th><th rowspan=\"2\">timeout</th>"
         "<th rowspan=\"2\" title=\"kj's own failure (harness_error) or the problem's (problem_error): out "
         "of every rate\">not<br>judged</th></tr>\n<tr>";
  for (std::size_t i = 0; i < baselines.size(); ++i)
    out +=
        "<th>faster</th><th>noise-<br>aware</th><th>geomean<br><span class=\"ci\">failures as 1</span></th>";
  out += "</tr>\n";
  for (const auto& row : data.board) {
    std::vector<const result_row*> members;
    for (auto id : row.evaluation_ids)
      members.push_back(by_id.at(id));
    out += fmt::format(
        "<tr{} title=\"{}\"><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
        row.level == all_levels ? " class=\"group\"" : "", html::escape(provenance_text(members)),
        html::escape(row.producer), level_label(row.level), row.evaluations,
        percent_or(row.pass_compatible.value(), k_none_judged),
        percent_or(row.pass_strict.value(), row.pass_compatible.total == 0
                                                ? k_none_judged
                                                : "the strict verdict did not run (--no-strict)"));
    for (const auto& b : baselines)
      out += baseline_cells(row.column(b));
    out += fmt::format("<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       row.tokens_per_solved ? fmt::format("{:.0f}", *row.tokens_per_solved)
                                             : blank("only for candidates kj generated with an LLM (kj run "
                                                     "--adapter, kj generate), with a problem solved"),
                       row.cost_per_solved ? fmt::format("${:.4f}", *row.cost_per_solved)
                                           : blank("only for generated candidates whose model's price kj "
                                                   "knows (--prices), with a problem solved"),
                       row.crashes, row.timeouts, row.not_judged);
  }
  return out + "</table>\n";
}

std::string speedup_cell(const result_row& r, const std::string& mode) {
  const auto s = r.speedup_vs(mode);
  if (!s)
    return fmt::format("<td>{}</td>",
                       !r.candidate           ? not_timed(r)
                       : !r.untrusted.empty() ? blank("no speedup: time not trusted: " + r.untrusted)
                       : mode == "compile-default"
                           ? blank("no torch.compile baseline measured with this run's timing options "
                                   "(kj baselines; a --quick run's options are not the default ones)")
                           : blank("no baseline time for this evaluation"));
  const auto ci = r.speedup_ci_vs(mode);
  const std::string label =
      mode == "best" ? fmt::format(" <span class=\"ci\">{}</span>", html::escape(r.best_baseline)) : "";
  // A strict failure is never shown as a plain speedup.
  if (!r.counted_correct())
    return fmt::format("<td title=\"not counted: the strict verdict failed\"><span class=\"void\">{}</span> "
                       "<span class=\"bad\">strict fail</span></td>",
                       html::ratio(s));
  // "~": the rule kj results marks by (may_be_noise).
  const bool noisy = may_be_noise(r, ci);
  const std::string mark =
      noisy ? "<span class=\"ci\" title=\"may be noise: " +
                  html::escape(r.noise.empty() ? "its 95% interval includes 1" : r.noise) + "\">~</span>"
            : "";
  // "h": host-bound, the rule kj results marks by (host_bound)
  const std::string host =
      host_bound(r)
          ? fmt::format("<span class=\"ci\" title=\"host-bound: the candidate kept the GPU busy "
                        "{:.0f}% of its timed window (under {:.0f}%): the speedup measures host time as "
                        "much as kernels\">h</span>",
                        100 * *r.gpu_busy_share, 100 * k_host_bound_share)
          : "";
  return fmt::format("<td>{}{}{}{}<br><span class=\"ci\">{}</span></td>", html::ratio(s), mark, host, label,
                     html::interval(ci));
}

// Under the problem's name: why it is unsound (kj audit or the verified set), weak under KernelBench's rule,
// or changed since the verified set audited it; the reason in the title.
std::string problem_mark(const result_row& r) {
  const auto mark = [](const std::string& why, const std::string& label) {
    return "<br><span class=\"bad\" title=\"" + html::escape(why) + "\">" + label + "</span>";
  };
  if (!r.unsound_problem.empty()) return mark(r.unsound_problem, "unsound problem");
  if (r.verified == "weak") return mark(r.verified_why, "weak problem");
  if (r.verified == "changed") return mark(r.verified_why, "changed since verified");
  return "";
}

std::string problem_row(const result_row& r) {
  std::string strict =
      r.strict_verdict == kj::strict_verdict::none
          ? blank("the strict verdict did not run (--no-strict, or the evaluation ended before it)")
          : html::escape(name_of(r.strict_verdict));
  if (!r.strict_failed.empty())
    strict += "<br><span class=\"ci\">" + html::escape(r.strict_failed) + "</span>";
  std::string cand = not_timed(r);
  if (r.candidate)
    cand = fmt::format("{}<br><span class=\"ci\">n={} {}</span>", html::ms(r.candidate->ms),
                       r.candidate->samples_ms.size(), html::interval(r.candidate->ci_ms));
  const std::string page = fmt::format("e/{}.html", r.evaluation_id);
  return fmt::format(
      "<tr title=\"{}\"><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>"
      "<td class=\"l {}\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td>{}{}{}<td>{}</td>"
      "<td>{}</td><td class=\"l\"><a href=\"{}#source\">source</a> <a "
      "href=\"{}#trace\">trace</a></td></tr>\n",
      html::escape(provenance_text({&r})), r.level, r.number, html::escape(r.problem_name) + problem_mark(r),
      html::escape(r.producer), r.sample, r.verdict == kj::verdict::correct ? "good" : "bad",
      html::escape(name_of(r.verdict)), strict,
      r.findings.empty() ? blank("no findings: the static scan and the run saw nothing to report")
                         : html::escape(r.findings),
      cand, speedup_cell(r, "eager"), speedup_cell(r, "compile-default"), speedup_cell(r, "best"),
      percent_or(r.library_share, k_no_trace), percent_or(r.gpu_busy_share, k_no_trace), page, page);
}

std::string problems_section(const report_data& data) {
  std::string out =
      "<h2 id=\"problems\">Problems</h2>\n<p class=\"prov\">One row per evaluation (the newest "
      "of each producer, problem and sample). Speedups: baseline time over candidate time, with "
      "the 95% bootstrap interval from the raw samples. <a href=\"problems.csv\">problems.csv</a> "
      "has the same rows. A problem that <code>kj audit</code> found unsound (a null candidate passes "
      "the strict rule, or its reference is stochastic or constant) is marked: its results say little. A "
      "<code>~</code> marks a speedup that may be noise; an <code>h</code> marks a host-bound speedup (the "
      "candidate kept the GPU busy under " +
      fmt::format("{:.0f}", 100 * k_host_bound_share) +
      "% of its timed window: it compares the host's launch speed in two processes as much as the kernels). "
      "A blank cell says why it is blank when you point at it.</p>\n"
      "<table><tr><th>L</th><th>id</th><th class=\"l\">problem</th><th class=\"l\">producer</th>"
      "<th>sample</th><th class=\"l\">compatible</th><th class=\"l\">strict</th>"
      "<th class=\"l\">findings</th><th>candidate</th><th>vs eager</th><th>vs compile</th>"
      "<th>vs best</th><th>library<br>share</th><th>GPU<br>busy</th><th class=\"l\">details</th></tr>\n";
  for (const auto& r : data.rows)
    out += problem_row(r);
  return out + "</table>\n";
}

} // namespace

std::string index_html(const report_data& data, const std::string& chartjs_text,
                       const std::vector<std::string>& chartjs_tried) {
  const std::string nonce = html::new_nonce();
  std::string out = html::page_begin("kerneljudge report", nonce);
  out += "<h1>kerneljudge report</h1>\n<p class=\"prov\">";
  out +=
      fmt::format("{} evaluations from <code>{}</code>. Sections: <a href=\"#leaderboard\">leaderboard</a>, "
                  "<a href=\"#charts\">charts</a>, <a href=\"#table1\">the paper's Table 1</a>, "
                  "<a href=\"#problems\">problems</a>, <a href=\"#provenance\">provenance</a>. Definitions: "
                  "docs/reports.md.</p>\n",
                  data.rows.size(), html::escape(data.db_path.string()));
  out += leaderboard_section(data);
  out += charts_section(data, chartjs_text, chartjs_tried, nonce);
  out += table1_section(data);
  out += problems_section(data);
  out += runs_section(data);
  return out + html::page_end();
}

} // namespace kj::reports::detail
