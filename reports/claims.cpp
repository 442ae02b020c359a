// A published set's claims beside kj's measurements (claims.hpp).
#include "reports/claims.hpp"

#include "reports/stats.hpp"
#include "reports/telling_line.hpp"

#include <cctype>
#include <cmath>
#include <fmt/core.h>
#include <map>
#include <stdexcept>

using nlohmann::json;

namespace kj::reports {
namespace {

std::optional<double> claim(const json& row, const char* key) {
  const auto it = row.find("claims");
  if (it == row.end() || !it->is_object() || !it->contains(key) || !(*it)[key].is_number())
    return std::nullopt;
  return (*it)[key].get<double>();
}

// The run's evaluation of a problem: sample 0 where there is one, the newest of those.
const result_row* match(const std::vector<result_row>& results, int level, int problem_id) {
  const result_row* best = nullptr;
  for (const auto& r : results)
    if (r.level == level && r.number == problem_id &&
        (!best || (r.sample < best->sample) ||
         (r.sample == best->sample && r.evaluation_id > best->evaluation_id)))
      best = &r;
  return best;
}

std::string lower(std::string text) {
  for (char& ch : text)
    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

std::string first_line(const std::string& text, std::size_t most = 90) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > most ? line.substr(0, most - 3) + "..." : line;
}

// What the failing strict classes say of the kernel, the most telling class first (docs/methodology.md, "Case
// classes"): an output aliasing its input fails the value classes too, but the alias is the cause.
std::string strict_meaning(const std::string& failed) {
  static const std::pair<const char*, const char*> meanings[] = {
      {"inputs", "it changes an input in place"},
      {"output", "its output aliases an input or is not a plain tensor of the reference's dtype and shape"},
      {"timed_outputs", "its timed calls compute something else than its checked ones"},
      {"side_stream", "its work runs on a stream kj's timing does not wait for"},
      {"determinism", "two calls on the same inputs differ"},
      {"shape", "wrong at other sizes (sizes fixed in the kernel?)"},
      {"compatible", "strict's tolerance fails where KernelBench's passes (lower precision?)"},
      {"random", "wrong on the problem's own inputs drawn with other seeds"},
      {"distribution", "wrong on inputs of another distribution (signs, magnitudes)"},
      {"nan", "NaN inputs give another result than the reference's"},
      {"inf", "Inf inputs give another result than the reference's"},
      {"denormal", "subnormal inputs give another result (flush to zero, fast math)"},
      {"extreme", "large inputs overflow where the reference does not"},
      {"negzero", "-0.0 inputs give another result"}};
  const std::string list = "," + failed + ",";
  for (const auto& [name, meaning] : meanings)
    if (list.find(fmt::format(",{},", name)) != std::string::npos) return meaning;
  return "a class kj's strict verdict checks (docs/methodology.md)";
}

// Why a row's evaluation is not a judgement of the release's kernel on the release's problem ("" when it is).
std::string not_the_release(const result_row& r, const json& row) {
  if (row.value("reference_sha256", r.problem_hash) != r.problem_hash)
    return "judged against another reference than the release's (run the imported KernelBench folder)";
  if (row.value("kernel_sha256", r.candidate_hash) != r.candidate_hash)
    return "judged another kernel than the release's (run the imported candidates folder)";
  if (!r.sizes.empty() && r.sizes != "{}")
    return "judged at other sizes than the release's (--set " + r.sizes + "): not the problem it claims for";
  return "";
}

// Why measurement and claim differ, as far as kj can tell: the first reason that applies.
std::string explain(const claim_row& c, const result_row* r, const std::string& gpu,
                    const std::string& device) {
  if (!c.kernel)
    return c.claimed_eager
               ? fmt::format("no kernel in the release: its {:.2f}x over eager has no code to check",
                             *c.claimed_eager)
               : "no kernel in the release, and no claim";
  if (!r) return "not judged in this run";
  if (!r->judged()) return fmt::format("not judged: {} ({})", c.verdict, first_line(telling_line(r->error)));
  if (r->verdict != kj::verdict::correct) {
    const std::string why = r->reason.empty() ? "" : " (" + r->reason + ")";
    return fmt::format("not counted correct: {}{}: {}", c.verdict, why, first_line(telling_line(r->error)));
  }
  if (!c.counted_correct)
    return fmt::format("correct by KernelBench's rule, but strict fails ({}): {}{}; kj show evaluation {} "
                       "gives each case",
                       r->strict_failed.empty() ? "-" : r->strict_failed, strict_meaning(r->strict_failed),
                       r->findings.empty() ? "" : " (findings: " + r->findings + ")", r->evaluation_id);
  if (!r->untrusted.empty())
    return "time not trusted: " + r->untrusted + (!r->numerics ? "" : " (" + numerics_text(*r) + ")");
  if (!c.measured_eager) return "not timed";
  if (!c.claimed_eager) return "no claim over eager";
  const bool elsewhere =
      !gpu.empty() && !device.empty() && lower(device).find(lower(gpu)) == std::string::npos;
  const std::string where = elsewhere ? fmt::format("claimed on {}, measured on {}", gpu, device) : "";
  const double ratio = *c.measured_eager / *c.claimed_eager;
  if (ratio >= 0.9 && ratio <= 1.1) return "agrees (within 10%)" + (elsewhere ? ", though " + where : "");
  std::string text = fmt::format("measured {:.3g}x of the claim", ratio);
  if (!r->noise.empty()) text += "; the measured speedup may be noise";
  if (c.reference == "differs") text += "; the reference differs from KernelBench's";
  if (elsewhere) text += "; " + where;
  return text + "; kj times fresh inputs per call with the L2 flushed (docs/methodology.md)";
}

std::string text_field(const json& row, const char* key) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return "";
  if (!it->is_string())
    throw std::invalid_argument(fmt::format("a row's '{}' is {}, expected text", key, it->dump()));
  return it->get<std::string>();
}

claim_row row_of(const json& row, const std::vector<result_row>& results, const std::string& gpu,
                 const std::string& device) {
  if (!row.is_object()) throw std::invalid_argument("a row is " + row.dump() + ", expected an object");
  for (const char* key : {"level", "problem_id"})
    if (!row.contains(key) || !row[key].is_number_integer())
      throw std::invalid_argument(fmt::format("a row's '{}' is missing or not an integer", key));
  claim_row c;
  c.level = row["level"].get<int>();
  c.problem_id = row["problem_id"].get<int>();
  c.name = text_field(row, "name");
  c.reference = text_field(row, "reference");
  c.kernel = text_field(row, "kernel") == "written";
  for (const char* key : {"reference_sha256", "kernel_sha256"})
    text_field(row, key);
  c.claimed_eager = claim(row, "eager");
  c.claimed_compile = claim(row, "torch_compile");
  c.claimed_reduce_overhead = claim(row, "torch_compile_reduce_overhead");
  const result_row* r = c.kernel ? match(results, c.level, c.problem_id) : nullptr;
  if (r) {
    if (const std::string other = not_the_release(*r, row); !other.empty()) {
      c.explanation = other; // counts neither as judged nor as correct: not the claim's kernel or problem
      return c;
    }
    c.verdict = name_of(r->verdict);
    c.strict_verdict = name_of(r->strict_verdict);
    c.counted_correct = r->counted_correct();
    if (r->untrusted.empty()) {
      c.measured_eager = r->speedup_vs("eager");
      c.measured_compile = r->speedup_vs("compile-default");
      c.measured_reduce_overhead = r->speedup_vs("reduce-overhead");
    }
  }
  c.explanation = explain(c, r, gpu, device);
  return c;
}

std::string times(const std::optional<double>& x) {
  return x ? fmt::format("{:.2f}x", *x) : "-";
}

struct level_summary {
  int rows = 0, kernels = 0, judged = 0, correct = 0, agree = 0;
  std::vector<double> claimed, measured; // over eager, where both exist and the row is counted correct
};

std::map<int, level_summary> summarize(const claims_comparison& c) {
  std::map<int, level_summary> levels;
  for (const auto& r : c.rows)
    for (level_summary* s : {&levels[r.level], &levels[0]}) { // 0: all levels
      ++s->rows;
      s->kernels += r.kernel;
      s->judged += !r.verdict.empty();
      s->correct += r.counted_correct;
      s->agree += r.explanation.starts_with("agrees");
      if (r.counted_correct && r.claimed_eager && r.measured_eager) {
        s->claimed.push_back(*r.claimed_eager);
        s->measured.push_back(*r.measured_eager);
      }
    }
  return levels;
}

std::string verdict_cell(const claim_row& r) {
  return r.verdict.empty() ? "-" : r.verdict + (r.strict_verdict == "fail" ? "/strict" : "");
}

std::string level_name(int level) {
  return level == 0 ? "all" : fmt::format("L{}", level);
}

std::string geo(const std::vector<double>& v) {
  return v.empty() ? "-" : fmt::format("{:.2f}x", stats::geomean(v));
}

} // namespace

claims_comparison compare_claims(const json& claims, const std::vector<result_row>& results,
                                 const std::string& run, const std::string& device_name) {
  if (!claims.is_object() || claims.value("format", "") != "kj-claims-1" || !claims.contains("rows") ||
      !claims["rows"].is_array())
    throw std::invalid_argument(
        "claims.json: expected 'format': \"kj-claims-1\" and a 'rows' array (the file "
        "kj import writes)");
  claims_comparison c{text_field(claims, "source"), text_field(claims, "gpu"), run, device_name, {}};
  for (const auto& row : claims["rows"])
    c.rows.push_back(row_of(row, results, c.gpu, device_name));
  return c;
}

void write_claims_table(const claims_comparison& c, std::ostream& out) {
  out << fmt::format("{} claims ({} GPU) beside run {} ({})\n", c.source, c.gpu, c.run,
                     c.device_name.empty() ? "device unknown" : c.device_name);
  out << fmt::format("{:>2} {:>4} {:<34} {:>9} {:>9} {:>9} {:>9} {:<14} {}\n", "L", "id", "problem", "claim",
                     "measured", "claim/tc", "meas/tc", "verdict", "why they differ");
  for (const auto& r : c.rows)
    out << fmt::format("{:>2} {:>4} {:<34} {:>9} {:>9} {:>9} {:>9} {:<14} {}\n", r.level, r.problem_id,
                       r.name.substr(0, 34), times(r.claimed_eager), times(r.measured_eager),
                       times(r.claimed_compile), times(r.measured_compile), verdict_cell(r), r.explanation);
  out << "\nper level: rows, kernels, judged, counted correct, agreeing within 10%, geomean over eager "
         "(claimed "
         "vs measured, on the counted-correct rows with both)\n";
  for (const auto& [level, s] : summarize(c))
    out << fmt::format("  {:<6} {:>4} rows {:>4} kernels {:>4} judged {:>4} correct {:>4} agree   {} vs {}\n",
                       level_name(level), s.rows, s.kernels, s.judged, s.correct, s.agree, geo(s.claimed),
                       geo(s.measured));
}

void write_claims_markdown(const claims_comparison& c, std::ostream& out) {
  out << fmt::format("{} claims ({} GPU) beside kj run `{}` ({}).\n\n", c.source, c.gpu, c.run,
                     c.device_name.empty() ? "device unknown" : c.device_name);
  out << "| level | rows | kernels | judged | counted correct | agree (10%) | geomean claimed | geomean "
         "measured |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (const auto& [level, s] : summarize(c))
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", level_name(level), s.rows, s.kernels,
                       s.judged, s.correct, s.agree, geo(s.claimed), geo(s.measured));
  out << "\n| L | id | problem | claimed | measured | claimed (compile) | measured (compile) | verdict | why "
         "|\n"
         "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : c.rows)
    out << fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.level, r.problem_id, r.name,
                       times(r.claimed_eager), times(r.measured_eager), times(r.claimed_compile),
                       times(r.measured_compile), verdict_cell(r), r.explanation);
}

json claims_json(const claims_comparison& c) {
  const auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  json rows = json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"level", r.level},
                    {"problem_id", r.problem_id},
                    {"name", r.name},
                    {"reference", r.reference},
                    {"kernel", r.kernel},
                    {"claimed",
                     {{"eager", opt(r.claimed_eager)},
                      {"torch_compile", opt(r.claimed_compile)},
                      {"reduce_overhead", opt(r.claimed_reduce_overhead)}}},
                    {"measured",
                     {{"eager", opt(r.measured_eager)},
                      {"torch_compile", opt(r.measured_compile)},
                      {"reduce_overhead", opt(r.measured_reduce_overhead)}}},
                    {"verdict", r.verdict},
                    {"strict_verdict", r.strict_verdict},
                    {"counted_correct", r.counted_correct},
                    {"explanation", r.explanation}});
  json levels = json::object();
  for (const auto& [level, s] : summarize(c))
    levels[level_name(level)] = {
        {"rows", s.rows},
        {"kernels", s.kernels},
        {"judged", s.judged},
        {"counted_correct", s.correct},
        {"agree", s.agree},
        {"geomean_claimed", s.claimed.empty() ? json() : json(stats::geomean(s.claimed))},
        {"geomean_measured", s.measured.empty() ? json() : json(stats::geomean(s.measured))}};
  return {{"source", c.source},           {"gpu", c.gpu},     {"run", c.run},
          {"device_name", c.device_name}, {"levels", levels}, {"rows", rows}};
}

} // namespace kj::reports
