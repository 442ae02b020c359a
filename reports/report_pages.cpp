// One page per evaluation (e/<id>.html): verdicts, timings with the DB rows they came from, speedups, strict
// cases, findings, the kernel trace and the escaped sources. A page is a list of sections, so that agent
// trajectories (turns, tool calls, tool results; issue 16) are one more entry in evaluation_sections().
#include "reports/html.hpp"
#include "reports/report.hpp"
#include "reports/report_sections.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kj::reports::detail {

namespace {

// Where the evaluation's time went, one phase a line, longest first ("strict 13.2 s (82%)"); the raw JSON if
// it is not an object of numbers.
std::string phases_row(const std::string& phases_json) {
  const nlohmann::json phases = nlohmann::json::parse(phases_json, nullptr, false);
  std::vector<std::pair<double, std::string>> items;
  double total = 0;
  if (phases.is_object())
    for (const auto& [name, seconds] : phases.items())
      if (seconds.is_number()) {
        items.emplace_back(seconds.get<double>(), name);
        total += seconds.get<double>();
      }
  std::string cell;
  if (items.empty()) {
    cell = "<code>" + html::escape(phases_json) + "</code>";
  } else {
    std::sort(items.rbegin(), items.rend());
    for (const auto& [seconds, name] : items)
      cell += fmt::format("{}{} {:.2f} s ({:.0f}%)", cell.empty() ? "" : "<br>", html::escape(name), seconds,
                          total > 0 ? 100 * seconds / total : 0.0);
  }
  return "<tr><th class=\"l\">phases</th><td class=\"l\">" + cell + "</td></tr>";
}

using nlohmann::json;

struct page_context {
  const db::store& store;
  const report_data& data;
  const result_row& row;
  const db::evaluation_record& evaluation;
  const std::optional<db::candidate_record>& candidate;
  const std::optional<db::problem_record>& problem;
};

struct page_section {
  std::string id;
  std::string title;
  std::function<std::string(const page_context&)> body; // "" leaves the section out
};

std::string pre(const std::string& text) {
  return "<pre>" + html::escape(text) + "</pre>\n";
}

// Peak memory and phase times of the evaluation (schema v8), when recorded.
std::string memory_row(const result_row& r) {
  std::string out;
  if (r.memory) {
    const auto gib = [](const std::optional<std::int64_t>& v) {
      return v ? fmt::format("{:.2f} GiB", static_cast<double>(*v) / (1ull << 30)) : std::string("-");
    };
    const db::memory_record& m = *r.memory;
    // Blanks say why (review 11 U10): a CPU run has no device memory; an old row may have no budget.
    const bool device = m.device_peak_bytes || m.judge_device_bytes || m.runner_device_bytes;
    const std::string on_device =
        device              ? fmt::format("device {} (judge {}, runner {})", gib(m.device_peak_bytes),
                                          gib(m.judge_device_bytes), gib(m.runner_device_bytes))
        : r.device == "cpu" ? "device: none (a CPU run)"
                            : "device: not measured";
    out +=
        fmt::format("<tr><th class=\"l\">peak memory</th><td class=\"l\">{}; host judge {}, runner {}; {}"
                    "</td></tr>",
                    on_device, gib(m.judge_rss_bytes), gib(m.runner_rss_bytes),
                    m.budget_bytes ? "budget " + gib(m.budget_bytes) : std::string("budget: not recorded"));
  }
  if (!r.phases_json.empty()) out += phases_row(r.phases_json);
  return out;
}

std::string summary(const page_context& c) {
  const result_row& r = c.row;
  return fmt::format(
      "<table><tr><th class=\"l\">problem</th><td class=\"l\">L{} {} {} <span "
      "class=\"ci\">{}</span></td></tr>"
      "<tr><th class=\"l\">candidate</th><td class=\"l\">{} sample {} <code>{}</code></td></tr>"
      "<tr><th class=\"l\">compatible verdict</th><td class=\"l\">{}</td></tr>"
      "<tr><th class=\"l\">strict verdict</th><td class=\"l\">{} {}</td></tr>"
      "<tr><th class=\"l\">findings</th><td class=\"l\">{}</td></tr>{}"
      "<tr><th class=\"l\">run, stack</th><td class=\"l\">{}, <code>{}</code></td></tr>"
      "<tr><th class=\"l\">protocol, dtype, device</th><td class=\"l\">{}, {}, {}</td></tr></table>\n{}",
      r.level, r.number, html::escape(r.problem_name), html::escape(r.problem_key()),
      html::escape(r.producer), r.sample, html::escape(candidate_text(r)),
      html::escape(r.reason.empty() ? name_of(r.verdict) : name_of(r.verdict) + " (" + r.reason + ")"),
      html::escape(name_of(r.strict_verdict)), html::escape(r.strict_failed),
      r.findings.empty() ? "none: kj's scan of the source matched no pattern" : html::escape(r.findings),
      memory_row(r), html::escape(r.run_uid), html::escape(r.stack_hash), html::escape(r.protocol),
      html::escape(kj::name_of(r.dtype)), html::escape(r.device),
      r.error.empty() ? "" : "<h3>error</h3>" + pre(r.error));
}

std::string measured_row(const std::string& label, const measured& m) {
  return fmt::format("<tr><td class=\"l\">{}</td><td class=\"l\">{} #{}</td><td class=\"l\">{} / {}</td>"
                     "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
                     html::escape(label), m.table, m.row_id, html::escape(m.method), html::escape(m.clock),
                     stats::statistic_name(m.statistic), html::ms(m.ms), m.samples_ms.size(),
                     html::interval(m.ci_ms), html::escape(m.origin));
}

std::string timing_params(const page_context& c) {
  std::string out = "<details><summary>timing parameters as stored (params_json)</summary>";
  for (const auto& t : c.evaluation.timings)
    out += fmt::format("<h4>{} ({} / {})</h4>", html::escape(t.subject), html::escape(t.method),
                       html::escape(t.clock)) +
           pre(t.params_json);
  return out + "</details>\n";
}

// A candidate that computed at narrower numerics than the run's: its speedup at them, beside the run's.
std::string matched_note(const result_row& r) {
  if (!r.numerics) return "";
  const std::string at = kj::name_of(*r.numerics);
  if (!r.matched && !r.untrusted.empty())
    return fmt::format("<p>The candidate computed at {} (its findings).</p>\n", at);
  if (!r.matched)
    return fmt::format("<p>The candidate computed at {} (its findings); no eager baseline at {} is cached to "
                       "compare it with at its own numerics (<code>kj baselines --precision {} --modes "
                       "eager</code>, then judge again).</p>\n",
                       at, at, at);
  return fmt::format(
      "<p>The candidate computed at {} (its findings): <b>{} over eager at {}</b> (95% interval "
      "{}), beside its speedup at the run's {} above; only the run's counts.</p>\n",
      at, html::ratio(r.matched->speedup), at, html::interval(r.matched->ci), kj::name_of(r.dtype));
}

std::string timings(const page_context& c) {
  if (!c.row.candidate && c.row.baselines.empty())
    return c.row.verdict != kj::verdict::correct && c.row.reason != "tolerance"
               ? fmt::format("<p>Not timed: kj times a candidate only once it passed its checks (its verdict "
                             "is {}).</p>\n",
                             html::escape(name_of(c.row.verdict)))
               : "<p>Not timed: the run judged without timing (<code>--no-timing</code>), or its timing "
                 "failed (the verdict's error says why).</p>\n";
  std::string out = "<table><tr><th class=\"l\">what</th><th class=\"l\">DB row</th><th class=\"l\">method / "
                    "clock</th><th>statistic</th><th>headline</th><th>samples</th><th>95% interval [ms]</th>"
                    "<th class=\"l\">origin</th></tr>\n";
  if (c.row.candidate) out += measured_row("candidate", *c.row.candidate);
  for (const auto& b : c.row.baselines)
    out += measured_row(b.mode == "eager" ? "reference (eager, same run)" : "baseline " + b.mode, b.baseline);
  if (c.row.baselines.empty() && c.row.reference) // timed, but no speedup credited (below)
    out += measured_row("reference (eager, same run)", *c.row.reference);
  if (c.row.matched)
    out += measured_row("baseline eager at " + kj::name_of(*c.row.numerics), c.row.matched->baseline);
  out += "</table>\n";
  out += matched_note(c.row);
  if (c.row.baselines.empty() && !c.row.untrusted.empty())
    return out + "<p class=\"bad\">No speedup: the time is not trusted: " + html::escape(c.row.untrusted) +
           "</p>\n" + timing_params(c);
  out += "<table><tr><th class=\"l\">speedup vs</th><th>value</th><th>95% bootstrap "
         "interval</th></tr>\n";
  for (const auto& b : c.row.baselines)
    out += fmt::format("<tr><td class=\"l\">{}{}</td><td>{}</td><td>{}</td></tr>\n", html::escape(b.mode),
                       b.mode == c.row.best_baseline ? " (best)" : "", html::ratio(b.speedup),
                       html::interval(b.ci));
  out += "</table>\n";
  if (!c.row.counted_correct() && !c.row.baselines.empty())
    out += "<p class=\"bad\">Not counted: the candidate is not correct under the strict verdict.</p>\n";
  return out + timing_params(c);
}

std::string cases(const page_context& c) {
  if (c.evaluation.cases.empty()) return "";
  std::string out =
      "<table><tr><th class=\"l\">class</th><th>#</th><th>seed</th><th class=\"l\">status</th>"
      "<th>max abs err</th><th>max rel err</th><th>mismatches</th><th class=\"l\">message</th></tr>\n";
  for (const auto& k : c.evaluation.cases)
    out += fmt::format(
        "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td class=\"l {}\">{}</td><td>{:.3g}</td>"
        "<td>{:.3g}</td><td>{}</td><td class=\"l\">{}</td></tr>\n",
        html::escape(k.case_class), k.index, k.seed, k.status == case_status::fail ? "bad" : "",
        name_of(k.status), k.max_abs_err, k.max_rel_err, k.mismatches,
        !k.message.empty()
            ? html::escape(k.message)
            : fmt::format("<span title=\"{}\">{}</span>",
                          k.status == case_status::pass ? "passed: nothing to report" : "no message recorded",
                          html::missing));
  return out + "</table>\n";
}

std::string findings(const page_context& c) {
  if (c.evaluation.findings.empty()) return "";
  std::string out = "<table><tr><th class=\"l\">kind</th><th>line</th><th class=\"l\">excerpt</th></tr>\n";
  for (const auto& f : c.evaluation.findings)
    out += fmt::format("<tr><td class=\"l\">{}</td><td>{}</td><td class=\"l\"><code>{}</code></td></tr>\n",
                       html::escape(f.kind), f.line, html::escape(f.excerpt));
  return out + "</table>\n";
}

std::string trace(const page_context& c) {
  for (const auto& t : c.evaluation.timings) {
    if (t.subject != "candidate") continue;
    try {
      const json params = json::parse(t.params_json);
      if (params.is_object() && params.contains("trace"))
        return pre(params["trace"].dump(2, ' ', false, json::error_handler_t::replace));
    } catch (const json::exception&) {
    }
  }
  return "<p class=\"muted\">No kernel trace: traces are taken on CUDA only (CUPTI).</p>\n";
}

std::string source(const page_context& c) {
  return c.candidate ? pre(c.candidate->source) : "<p class=\"muted\">not in the DB</p>\n";
}

std::string problem_source(const page_context& c) {
  return c.problem ? pre(c.problem->source) : "<p class=\"muted\">not in the DB</p>\n";
}

const std::vector<page_section>& evaluation_sections() {
  static const std::vector<page_section> sections{
      {"summary", "Verdicts", summary},
      {"timings", "Timings and speedups (with their DB rows)", timings},
      {"cases", "Strict verification cases", cases},
      {"findings", "Static findings", findings},
      {"trace", "Kernel trace", trace},
      {"agent", "Agent trajectory (the transcript behind this result)",
       [](const page_context& c) { return trajectory_section(c.store, c.row.evaluation_id); }},
      {"source", "Candidate source", source},
      {"problem", "Problem source", problem_source},
  };
  return sections;
}

} // namespace

std::string evaluation_page(const db::store& store, const report_data& data, const result_row& row) {
  const auto evaluation = store.get_evaluation(row.evaluation_id);
  const auto candidate = store.get_candidate(row.candidate_id);
  const auto problem = evaluation ? store.get_problem(evaluation->problem_id) : std::nullopt;
  const db::evaluation_record empty;
  const page_context context{store, data, row, evaluation ? *evaluation : empty, candidate, problem};
  std::string out = html::page_begin(fmt::format("evaluation {}", row.evaluation_id), html::new_nonce());
  out += fmt::format("<p><a href=\"../index.html\">report</a></p><h1>Evaluation {}: L{} {} {} by {}</h1>\n"
                     "<p class=\"prov\">From <code>{}</code>, table <code>evaluations</code> id {}.</p>\n",
                     row.evaluation_id, row.level, row.number, html::escape(row.problem_name),
                     html::escape(row.producer), html::escape(data.db_path.string()), row.evaluation_id);
  for (const auto& section : evaluation_sections()) {
    const std::string body = section.body(context);
    if (!body.empty())
      out += fmt::format("<h2 id=\"{}\">{}</h2>\n{}", section.id, html::escape(section.title), body);
  }
  return out + html::page_end();
}

} // namespace kj::reports::detail
