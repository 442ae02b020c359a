// Implements the KernelBench eval_results.json and JUnit XML exports.
#include "reports/export.hpp"

#include "reports/html.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kj::reports {
namespace {

using nlohmann::json;

// KernelBench's runtime_stats of the candidate's samples [ms] (mean, std, min, max, num_trials; 3 digits as
// its get_timing_stats rounds them).
json runtime_stats(const measured& m) {
  const auto& s = m.samples_ms;
  if (s.empty()) return json::object();
  const double mean = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(s.size());
  double var = 0;
  for (double v : s)
    var += (v - mean) * (v - mean);
  const auto round3 = [](double v) { return std::stod(fmt::format("{:.3g}", v)); };
  return {{"mean", round3(mean)},
          {"std", round3(std::sqrt(var / static_cast<double>(s.size())))},
          {"min", round3(*std::min_element(s.begin(), s.end()))},
          {"max", round3(*std::max_element(s.begin(), s.end()))},
          {"num_trials", s.size()}};
}

// KernelBench's metadata keys for the failure, plus kj's own verdicts.
json metadata_of(const result_row& r) {
  json m{{"device", r.device},
         {"kj_verdict", name_of(r.verdict)},
         {"kj_strict_verdict", name_of(r.strict_verdict)},
         {"kj_strict_failed", r.strict_failed},
         {"kj_evaluation_id", r.evaluation_id},
         {"kj_run", r.run_uid},
         {"kj_protocol", r.protocol}};
  if (!r.untrusted.empty()) m["kj_time_not_trusted"] = r.untrusted;
  if (r.verdict == kj::verdict::compile_error || r.verdict == kj::verdict::load_error) {
    m["compilation_error_name"] = name_of(r.verdict);
    m["compilation_error"] = r.error;
  } else if (r.verdict == kj::verdict::runtime_error || r.verdict == kj::verdict::timeout ||
             r.verdict == kj::verdict::crashed || r.verdict == kj::verdict::oom) {
    m["runtime_error_name"] = name_of(r.verdict);
    m["runtime_error"] = r.error;
  } else if (r.verdict == kj::verdict::incorrect) {
    m["correctness_issue_name"] = "correctness_issue";
    m["correctness_issue"] = r.error.empty() ? "Output mismatch" : r.error;
  } else if (!r.error.empty()) {
    m["kj_error"] = r.error;
  }
  return m;
}

bool compiled(const result_row& r) {
  return r.verdict != kj::verdict::compile_error && r.verdict != kj::verdict::load_error &&
         r.verdict != kj::verdict::no_code && r.verdict != kj::verdict::problem_error;
}

bool is_error(const result_row& r) {
  return r.verdict == kj::verdict::harness_error || r.verdict == kj::verdict::problem_error;
}

std::string ms_text(const std::optional<measured>& m) {
  return m ? fmt::format("{}", m->ms) : "";
}

void write_testcase(const result_row& r, std::ostream& out) {
  out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\">\n",
                     xml_escape(fmt::format("L{}.{}", r.level, r.problem_file)),
                     xml_escape(fmt::format("{} sample {}", r.producer, r.sample)), r.duration_s.value_or(0));
  out << "      <properties>\n";
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"verdict", name_of(r.verdict)},
           {"strict_verdict", name_of(r.strict_verdict)},
           {"candidate", candidate_text(r)},
           {"candidate_ms", ms_text(r.candidate)},
           {"reference_ms", ms_text(r.reference)},
           {"speedup", r.speedup ? fmt::format("{}", *r.speedup) : ""},
           {"evaluation_id", std::to_string(r.evaluation_id)}})
    if (!value.empty())
      out << fmt::format("        <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
  out << "      </properties>\n";
  const std::string message =
      r.strict_verdict == kj::strict_verdict::fail && r.verdict == kj::verdict::correct
          ? "strict verdict fail: " + r.strict_failed
          : name_of(r.verdict) + (r.reason.empty() ? "" : " (" + r.reason + ")");
  if (r.verdict == kj::verdict::needs_weights)
    out << fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(message));
  else if (is_error(r))
    out << fmt::format("      <error message=\"{}\" type=\"{}\">{}</error>\n", xml_escape(message),
                       name_of(r.verdict), xml_escape(r.error));
  else if (!r.counted_correct())
    out << fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml_escape(message),
                       name_of(r.verdict), xml_escape(r.error));
  out << "    </testcase>\n";
}

} // namespace

std::string xml_escape(const std::string& text) {
  std::string kept;
  kept.reserve(text.size());
  for (const char c : text) // control characters other than tab and newlines are not allowed in XML 1.0
    if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') kept += c;
  return html::escape(kept); // the same five entities (&#39; for the apostrophe, valid XML)
}

void write_kernelbench(const std::vector<result_row>& rows, std::ostream& out) {
  std::set<int> levels;
  std::set<std::string> producers;
  for (const auto& r : rows) {
    levels.insert(r.level);
    producers.insert(r.producer);
  }
  if (levels.size() > 1)
    throw std::invalid_argument(fmt::format("the run holds {} levels: export one with --level (KernelBench's "
                                            "eval_results.json holds one level)",
                                            levels.size()));
  if (producers.size() > 1)
    throw std::invalid_argument("the run holds candidates of several producers: export one with --producer");
  std::map<int, json> problems; // numeric order, as KernelBench sorts them
  for (const auto& r : rows) {
    if (!r.judged()) continue; // kj's or the problem's failure: not an incorrect kernel, so not exported
    json& samples = problems.try_emplace(r.number, json::array()).first->second;
    for (const auto& s : samples)
      if (s["sample_id"] == r.sample)
        throw std::invalid_argument(
            fmt::format("problem {} has two evaluations of sample {}: export one run", r.number, r.sample));
    // A time kj does not trust (its timed calls computed wrong outputs, or missed work) is no runtime.
    const bool timed = r.candidate.has_value() && r.verdict == kj::verdict::correct && r.untrusted.empty();
    samples.push_back({{"sample_id", r.sample},
                       {"compiled", compiled(r)},
                       {"correctness", r.verdict == kj::verdict::correct},
                       {"metadata", metadata_of(r)},
                       {"runtime", timed ? r.candidate->ms : -1.0},
                       {"runtime_stats", timed ? runtime_stats(*r.candidate) : json::object()}});
  }
  json file = json::object();
  for (auto& [number, samples] : problems)
    file[std::to_string(number)] = std::move(samples);
  out << file.dump(4, ' ', false, json::error_handler_t::replace) << "\n";
}

void write_junit(const std::vector<result_row>& rows, const std::string& run_uid, std::ostream& out) {
  std::size_t failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  for (const auto& r : rows) {
    if (r.verdict == kj::verdict::needs_weights)
      ++skipped;
    else if (is_error(r))
      ++errors;
    else if (!r.counted_correct())
      ++failures;
    seconds += r.duration_s.value_or(0);
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"kerneljudge\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n",
      rows.size(), failures, errors, skipped, seconds);
  out << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
                     "time=\"{:.3f}\">\n",
                     xml_escape(run_uid), rows.size(), failures, errors, skipped, seconds);
  for (const auto& r : rows)
    write_testcase(r, out);
  out << "  </testsuite>\n</testsuites>\n";
}

} // namespace kj::reports
