// The stacks table and Table 1 of index.html.
#include "reports/html.hpp"
#include "reports/report_sections.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <set>

namespace kj::reports::detail {

namespace {

// The fingerprint fields shown inline; the rest is one click away.
const char* const shown_fields[] = {
    "torch_cuda",         "cudnn",    "triton", "nvcc",      "cuda_driver", "nvidia_driver",
    "compute_capability", "gpu_uuid", "cpu",    "kj_version"};

std::string fingerprint_summary(const db::stack_record& stack) {
  std::string out =
      fmt::format("device <code>{}</code>; torch <code>{}</code>; python <code>{}</code>",
                  html::escape(stack.device_name), html::escape(stack.torch), html::escape(stack.python));
  nlohmann::json fp = nlohmann::json::parse(stack.fingerprint_json, nullptr, false);
  if (!fp.is_object()) return out;
  for (const char* field : shown_fields) {
    if (!fp.contains(field) || fp[field].is_null()) continue;
    const std::string value = fp[field].is_string() ? fp[field].get<std::string>() : fp[field].dump();
    if (value.empty()) continue;
    out += fmt::format("; {} <code>{}</code>", field, html::escape(value));
  }
  return out;
}

// A blank cell's reason, as its tooltip.
std::string blank_cell(const char* why) {
  return fmt::format("<td><span title=\"{}\">{}</span></td>", html::escape(why), html::missing);
}

const char* const k_no_compile =
    "no torch.compile baseline with this run's problem sizes, precision and timing options: measure them "
    "with "
    "kj baselines (the same timing options) or kj run --baselines compile-default";
const char* const k_no_timing = "no candidate of these problems was correct with a timing";

std::string estimate_cell(const estimate& e, bool as_percent, const char* why = k_no_timing) {
  if (!e.value) return blank_cell(why);
  const std::string value = as_percent ? html::percent(e.value) : html::ratio(e.value);
  return fmt::format("<td>{}<br><span class=\"ci\">{}</span></td>", value, html::interval(e.ci, as_percent));
}

std::string geomean_cell(const estimate& correct, const estimate& all, const char* why = k_no_timing) {
  if (!correct.value) return blank_cell(why);
  return fmt::format("<td>{}<br><span class=\"ci\">{}<br>failures as 1: {}</span></td>",
                     html::ratio(correct.value), html::interval(correct.ci), html::ratio(all.value));
}

std::string published_cell(const std::optional<double>& v, bool as_percent) {
  if (!v) return blank_cell("not in the published table");
  return fmt::format("<td>{}</td>", as_percent ? html::percent(v) : html::ratio(v));
}

std::string table1_table(const table1& t, const published_table& published) {
  std::string out = fmt::format(
      "<h3>Verdicts: {}</h3>\n<table><tr><th class=\"l\">system</th><th>level</th><th>problems</th>"
      "<th>pass rate</th><th>faster than eager</th><th>faster than compile</th><th>geomean vs eager</th>"
      "<th>geomean vs compile</th></tr>\n",
      html::escape(t.basis));
  for (const auto& row : t.rows) {
    const auto& c = row.cells;
    out += fmt::format(
        "<tr{}><td class=\"l\">{} <span class=\"ci\">(this machine)</span></td><td>{}</td><td>{}</td>",
        row.level == "overall" ? " class=\"group\"" : "", html::escape(row.system), html::escape(row.level),
        c.problems);
    const char* no_compile = c.faster_than_eager.value ? k_no_compile : k_no_timing;
    out += estimate_cell(c.pass_rate, true) + estimate_cell(c.faster_than_eager, true) +
           estimate_cell(c.faster_than_compile, true, no_compile) +
           geomean_cell(c.geomean_vs_eager, c.geomean_vs_eager_all) +
           geomean_cell(c.geomean_vs_compile, c.geomean_vs_compile_all, no_compile) + "</tr>\n";
  }
  for (const auto& p : published.rows)
    out += fmt::format(
        "<tr class=\"muted\"><td class=\"l\">{} <span class=\"ci\">(published)</span></td><td>{}</td>"
        "<td>{}</td>{}{}{}{}{}</tr>\n",
        html::escape(p.system), html::escape(p.level),
        p.tasks ? fmt::format("{:.0f}", *p.tasks) : html::missing, published_cell(p.pass_rate, true),
        published_cell(p.faster_than_eager, true), published_cell(p.faster_than_compile, true),
        published_cell(p.geomean_vs_eager, false), published_cell(p.geomean_vs_compile, false));
  return out + "</table>\n";
}

} // namespace

std::string stacks_table(const report_data& data) {
  std::string out = "<table><tr><th class=\"l\">stack</th><th class=\"l\">fingerprint</th></tr>\n";
  for (const auto& [id, stack] : data.stacks)
    out += fmt::format("<tr><td class=\"l\"><code>{}</code></td><td class=\"l\">{}<details><summary>all "
                       "fields</summary><pre>{}</pre></details></td></tr>\n",
                       html::escape(stack.stack_hash), fingerprint_summary(stack),
                       html::escape(stack.fingerprint_json));
  return out + "</table>\n";
}

std::string table1_section(const report_data& data) {
  std::string out =
      "<h2 id=\"table1\">The CUDA Agent paper's Table 1, on this machine</h2>\n<p class=\"prov\">";
  out +=
      "Pass rate, share of problems correct and faster than eager PyTorch and than "
      "<code>torch.compile</code> "
      "(default mode), and geometric-mean speedups (over correct problems; below, with failures counted as "
      "1.0), overall and per level. Intervals: 95% bootstrap over problems. <b>Compatible</b> uses the "
      "compatible verdict, as the paper does; <b>strict</b> also counts strict failures as failures. "
      "Published rows: " +
      html::escape(data.published.source) + ".</p>\n<p class=\"prov\">Measured on: ";
  std::set<std::string> timers, protocols;
  for (const auto& r : data.rows) {
    if (r.candidate) timers.insert(r.candidate->method + "/" + r.candidate->clock);
    protocols.insert(r.protocol);
  }
  for (const auto& [id, stack] : data.stacks)
    out += fmt::format("<code>{}</code>: {}. ", html::escape(stack.stack_hash), fingerprint_summary(stack));
  std::string ours;
  for (const auto& t : timers)
    ours += (ours.empty() ? "" : ", ") + t;
  std::string ours_protocols;
  for (const auto& p : protocols)
    ours_protocols += (ours_protocols.empty() ? "" : ", ") + p;
  if (ours.empty()) ours = "none (no candidate was timed: --no-timing, or none was correct)";
  out += fmt::format("Our timer: {}; protocol: {}. The paper's protocol: {}.</p>\n", html::escape(ours),
                     html::escape(ours_protocols), html::escape(data.published.protocol));
  out += table1_table(data.table_compatible, data.published);
  out += table1_table(data.table_strict, published_table{});
  out += "<ul class=\"prov\">";
  for (const auto& note : data.published.notes)
    out += "<li>" + html::escape(note) + "</li>";
  return out + "</ul>\n";
}

} // namespace kj::reports::detail
