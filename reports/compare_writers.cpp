// Writers of `kj compare`: table, Markdown (CI comments), JSON and HTML, plus the calibration summary.
#include "reports/compare.hpp"
#include "reports/html.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace kj::reports {

namespace {

using nlohmann::json;

std::string side_text(const compare_side& s) {
  const auto list = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items)
      out += (out.empty() ? "" : ", ") + i;
    return out;
  };
  return fmt::format("{} ({} evaluations; db {}; runs {}; producers {}; stacks {})", s.selector,
                     s.evaluations, s.db, list(s.runs), list(s.producers), list(s.stacks));
}

std::size_t count(const comparison& c, change_class k) {
  return c.counts.contains(k) ? c.counts.at(k) : 0;
}

std::string headline(const comparison& c) {
  std::string out = fmt::format("{} problems compared: ", c.rows.size());
  bool first = true;
  for (auto k : {change_class::regressed, change_class::broken, change_class::improved, change_class::fixed,
                 change_class::unchanged, change_class::too_noisy, change_class::not_timed}) {
    out += fmt::format("{}{} {}", first ? "" : ", ", count(c, k), change_name(k));
    first = false;
  }
  if (c.geomean_ratio)
    out += fmt::format("; geomean time ratio (head/base) {:.4f} [{:.4f}, {:.4f}]", *c.geomean_ratio,
                       c.geomean_ci.low, c.geomean_ci.high);
  return out;
}

std::string ratio_text(const comparison_row& r) {
  if (!r.ratio) return "";
  return r.ci.valid() ? fmt::format("{:.4f} [{:.4f}, {:.4f}]", *r.ratio, r.ci.low, r.ci.high)
                      : fmt::format("{:.4f}", *r.ratio);
}

std::string ms_text(const std::optional<double>& v, std::size_t n) {
  return v ? fmt::format("{:.4g} (n={})", *v, n) : "";
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : html::escape(text))
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string markdown_row(const comparison_row& r) {
  return fmt::format("| {} | L{} {} {} (sample {}) | {} | {} | {} | {} |\n", change_name(r.verdict), r.level,
                     r.number, markdown_cell(r.problem), r.sample, ms_text(r.base_ms, r.base_n),
                     ms_text(r.head_ms, r.head_n), ratio_text(r), markdown_cell(r.reason));
}

bool notable(const comparison_row& r) {
  return r.verdict != change_class::unchanged;
}

} // namespace

std::string compare_text(const comparison& c) {
  std::string out = fmt::format("base: {}\nhead: {}\n\n", side_text(c.base), side_text(c.head));
  out += fmt::format("{:<10} {:>2} {:>4} {:<32} {:>3} {:>18} {:>18} {:>28} {:>8}  {}\n", "class", "L", "id",
                     "problem", "s", "base ms", "head ms", "ratio head/base [95% CI]", "q", "reason");
  for (const auto& r : c.rows)
    out += fmt::format("{:<10} {:>2} {:>4} {:<32} {:>3} {:>18} {:>18} {:>28} {:>8}  {}\n",
                       change_name(r.verdict), r.level, r.number, r.problem.substr(0, 32), r.sample,
                       ms_text(r.base_ms, r.base_n), ms_text(r.head_ms, r.head_n), ratio_text(r),
                       r.q == r.q ? fmt::format("{:.2g}", r.q) : "", r.reason);
  if (!c.only_base.empty() || !c.only_head.empty()) {
    // Said only where a key of one side is a key of the other at other sizes.
    const auto unsized = [](const std::string& k) { return k.substr(0, k.find(" at {")); };
    const bool other_sizes = std::any_of(c.only_base.begin(), c.only_base.end(), [&](const auto& b) {
      return std::any_of(c.only_head.begin(), c.only_head.end(),
                         [&](const auto& h) { return unsized(h) == unsized(b) && h != b; });
    });
    out += fmt::format(
        "\nunmatched: {} only in base, {} only in head{}\n", c.only_base.size(), c.only_head.size(),
        other_sizes ? " (rows judged at other --set sizes are other measurements: never paired)" : "");
  }
  if (c.rows.empty()) out += "\nno problem in common: nothing was compared\n";
  out += fmt::format("\n{}\nminimum effect {:.1f}%, false discovery rate {:.2f}; {}\n", headline(c),
                     100 * c.options.min_effect, c.options.alpha, c.failed() ? "REGRESSION" : c.outcome());
  return out;
}

std::string compare_markdown(const comparison& c) {
  std::string out = fmt::format("### kj compare: {}\n\n{}\n\n", c.outcome(), markdown_cell(headline(c)));
  out +=
      fmt::format("- base: `{}`\n- head: `{}`\n- minimum effect {:.1f}%, Benjamini–Hochberg FDR {:.2f}, 95% "
                  "bootstrap intervals from the raw samples\n\n",
                  markdown_cell(side_text(c.base)), markdown_cell(side_text(c.head)),
                  100 * c.options.min_effect, c.options.alpha);
  const std::string header =
      "| class | problem | base ms | head ms | ratio [95% CI] | reason |\n|---|---|---|---|---|---|\n";
  std::string notable_rows, all_rows;
  for (const auto& r : c.rows) {
    all_rows += markdown_row(r);
    if (notable(r)) notable_rows += markdown_row(r);
  }
  if (!notable_rows.empty()) out += header + notable_rows + "\n";
  out += "<details><summary>all problems</summary>\n\n" + header + all_rows + "\n</details>\n";
  return out;
}

json compare_json(const comparison& c) {
  const auto side = [](const compare_side& s) {
    return json{{"selector", s.selector},   {"db", s.db},
                {"runs", s.runs},           {"stacks", s.stacks},
                {"producers", s.producers}, {"evaluations", s.evaluations}};
  };
  json rows = json::array();
  for (const auto& r : c.rows) {
    const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
    rows.push_back({{"key", r.key},
                    {"level", r.level},
                    {"problem_id", r.number},
                    {"problem", r.problem},
                    {"sample", r.sample},
                    {"class", change_name(r.verdict)},
                    {"reason", r.reason},
                    {"base",
                     {{"evaluation_id", r.base_evaluation},
                      {"timing_id", r.base_timing},
                      {"producer", r.base_producer},
                      {"stack", r.base_stack},
                      {"verdict", r.base_verdict},
                      {"ms", opt(r.base_ms)},
                      {"samples", r.base_n}}},
                    {"head",
                     {{"evaluation_id", r.head_evaluation},
                      {"timing_id", r.head_timing},
                      {"producer", r.head_producer},
                      {"stack", r.head_stack},
                      {"verdict", r.head_verdict},
                      {"ms", opt(r.head_ms)},
                      {"samples", r.head_n}}},
                    {"statistic", stats::statistic_name(r.statistic)},
                    {"ratio", opt(r.ratio)},
                    {"ci", r.ci.valid() ? json::array({r.ci.low, r.ci.high}) : json()},
                    {"p", r.p == r.p ? json(r.p) : json()},
                    {"q", r.q == r.q ? json(r.q) : json()},
                    {"control_ratio", opt(r.control_ratio)},
                    {"gpu_busy_share", opt(r.busy_share)}});
  }
  json counts = json::object();
  for (const auto& [k, n] : c.counts)
    counts[change_name(k)] = n;
  return {{"format", "kj-compare"},
          {"format_version", 1},
          {"base", side(c.base)},
          {"head", side(c.head)},
          {"options",
           {{"min_effect", c.options.min_effect},
            {"alpha", c.options.alpha},
            {"min_busy_share", c.options.min_busy_share},
            {"bootstrap_replicates", c.options.bootstrap.replicates},
            {"confidence", c.options.bootstrap.confidence}}},
          {"counts", counts},
          {"timed", c.timed},
          {"geomean_ratio", c.geomean_ratio ? json(*c.geomean_ratio) : json()},
          {"geomean_ci", c.geomean_ci.valid() ? json::array({c.geomean_ci.low, c.geomean_ci.high}) : json()},
          {"regression", c.failed()},
          {"outcome", c.outcome()},
          {"rows", rows},
          {"only_base", c.only_base},
          {"only_head", c.only_head}};
}

std::string compare_html(const comparison& c) {
  std::string out = html::page_begin("kj compare", html::new_nonce());
  out += fmt::format(
      "<h1>kj compare: <span class=\"{}\">{}</span></h1>\n<p>{}</p>\n<p class=\"prov\">base: {}<br>"
      "head: {}<br>minimum effect {:.1f}%, Benjamini–Hochberg FDR {:.2f}, 95% bootstrap intervals of "
      "the time ratio from the raw samples (docs/reports.md).</p>\n",
      c.failed() || c.rows.empty() ? "bad" : "good", c.outcome(), html::escape(headline(c)),
      html::escape(side_text(c.base)), html::escape(side_text(c.head)), 100 * c.options.min_effect,
      c.options.alpha);
  out +=
      "<table><tr><th class=\"l\">class</th><th>L</th><th>id</th><th class=\"l\">problem</th><th>sample</th>"
      "<th>base</th><th>head</th><th>ratio head/base</th><th>q</th><th>reference moved</th>"
      "<th class=\"l\">reason</th><th class=\"l\">DB rows (evaluations)</th></tr>\n";
  for (const auto& r : c.rows) {
    const char* css = r.verdict == change_class::regressed || r.verdict == change_class::broken ? "bad"
                      : r.verdict == change_class::improved || r.verdict == change_class::fixed ? "good"
                      : r.verdict == change_class::too_noisy                                    ? "warn"
                                                                                                : "";
    out +=
        fmt::format("<tr><td class=\"l {}\">{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td>"
                    "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td>"
                    "<td class=\"l\">{} / {}</td></tr>\n",
                    css, change_name(r.verdict), r.level, r.number, html::escape(r.problem), r.sample,
                    html::escape(ms_text(r.base_ms, r.base_n)), html::escape(ms_text(r.head_ms, r.head_n)),
                    html::escape(ratio_text(r)), r.q == r.q ? fmt::format("{:.2g}", r.q) : "",
                    r.control_ratio ? fmt::format("{:.4f}", *r.control_ratio) : "", html::escape(r.reason),
                    r.base_evaluation, r.head_evaluation);
  }
  return out + "</table>\n" + html::page_end();
}

} // namespace kj::reports
