// `kj results --format markdown`: the rows as a GitHub-flavoured Markdown table, for a pull request or an
// issue.
#include "reports/results_table.hpp"
#include "reports/telling_line.hpp"

#include <fmt/format.h>

namespace kj::reports {
namespace {

// A cell's text: one line, its pipes escaped so they do not split the row.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text.substr(0, text.find('\n')))
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string ms_cell(const std::optional<double>& v) {
  return v ? fmt::format("{:.4f}", *v) : "";
}

std::string speedup(const result_row& r) {
  if (!r.speedup) return "";
  return fmt::format("{:.2f}x{}{}", *r.speedup, may_be_noise(r) ? " ~" : "", host_bound(r) ? " h" : "");
}

std::string note(const result_row& r) {
  if (!r.untrusted.empty())
    return "time not trusted: " + r.untrusted + (!r.numerics ? "" : " (" + numerics_text(r) + ")");
  if (!r.error.empty()) return telling_line(r.error);
  if (r.numerics) return numerics_text(r);
  if (!r.noise.empty()) return "may be noise: " + r.noise;
  if (host_bound(r))
    return fmt::format("host-bound: the GPU busy {:.0f}% of the candidate's window", 100 * *r.gpu_busy_share);
  return r.findings;
}

} // namespace

void write_markdown(const std::vector<result_row>& rows, std::ostream& out) {
  out << "| L | id | problem | producer | sample | verdict | strict | cand ms | ref ms | speedup | note |\n"
         "|--:|--:|---|---|--:|---|---|--:|--:|--:|---|\n";
  for (const auto& r : rows) {
    const std::string strict =
        r.strict_verdict == kj::strict_verdict::fail ? "fail: " + r.strict_failed : name_of(r.strict_verdict);
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.level, r.number,
                       cell(r.problem_name), cell(r.producer), r.sample, cell(name_of(r.verdict)),
                       cell(strict), ms_cell(r.candidate_median_ms), ms_cell(r.reference_median_ms),
                       speedup(r), cell(note(r)));
  }
}

} // namespace kj::reports
