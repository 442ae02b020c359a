// Implements Table 1: the point values, a cluster bootstrap over problems for their intervals, and the
// published numbers from the embedded data file.
#include "reports/paper_table.hpp"

#include <array>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

namespace kj::reports {

namespace data {
extern const std::string_view paper_table1_json;
}

namespace {

using cluster = std::vector<const result_row*>; // the evaluations of one problem

constexpr std::size_t metric_count = 7;
using metric_values = std::array<double, metric_count>; // NaN: undefined

bool correct(const result_row& r, bool strict) {
  return strict ? r.counted_correct() : r.verdict == kj::verdict::correct;
}

double geomean_or_nan(const std::vector<double>& values) {
  return values.empty() ? std::nan("") : stats::geomean(values);
}

// pass, faster eager, faster compile, geomean eager, geomean compile, and the two geomeans with failures
// as 1.
metric_values compute_metrics(const std::vector<const cluster*>& clusters, bool strict) {
  std::size_t n = 0, pass = 0, faster_eager = 0, faster_compile = 0;
  std::vector<double> ge, gc, ge_all, gc_all;
  bool any_compile = false, any_eager = false;
  for (const cluster* c : clusters)
    for (const result_row* r : *c) {
      ++n;
      const bool ok = correct(*r, strict);
      pass += ok ? 1 : 0;
      // NaN: no speedup (a failure, or the baseline was not measured); GCC cannot see through optionals here.
      const double se = ok ? r->speedup_vs("eager").value_or(std::nan("")) : std::nan("");
      const double sc = ok ? r->speedup_vs("compile-default").value_or(std::nan("")) : std::nan("");
      any_eager = any_eager || r->speedup_vs("eager").has_value();
      any_compile = any_compile || r->speedup_vs("compile-default").has_value();
      if (std::isfinite(se)) ge.push_back(se);
      if (std::isfinite(sc)) gc.push_back(sc);
      ge_all.push_back(std::isfinite(se) ? se : 1.0);
      gc_all.push_back(std::isfinite(sc) ? sc : 1.0);
      faster_eager += se > 1 ? 1 : 0;
      faster_compile += sc > 1 ? 1 : 0;
    }
  const double nan = std::nan("");
  if (n == 0) return {nan, nan, nan, nan, nan, nan, nan};
  const double dn = static_cast<double>(n);
  return {static_cast<double>(pass) / dn,
          any_eager ? static_cast<double>(faster_eager) / dn : nan,
          any_compile ? static_cast<double>(faster_compile) / dn : nan,
          geomean_or_nan(ge),
          geomean_or_nan(gc),
          any_eager ? geomean_or_nan(ge_all) : nan,
          any_compile ? geomean_or_nan(gc_all) : nan};
}

table1_cells cells_for(const std::vector<cluster>& clusters, bool strict,
                       const stats::bootstrap_options& options, const std::string& seed_key) {
  table1_cells cells;
  std::vector<const cluster*> all;
  for (const auto& c : clusters) {
    all.push_back(&c);
    cells.evaluations += c.size();
  }
  cells.problems = clusters.size();
  const metric_values point = compute_metrics(all, strict);
  std::array<std::vector<double>, metric_count> replicates;
  std::mt19937_64 rng(stats::seed_for(seed_key, options.seed));
  std::uniform_int_distribution<std::size_t> pick(0, clusters.empty() ? 0 : clusters.size() - 1);
  for (int b = 0; b < options.replicates && !clusters.empty(); ++b) {
    std::vector<const cluster*> drawn(clusters.size());
    for (auto& d : drawn)
      d = &clusters[pick(rng)];
    const metric_values v = compute_metrics(drawn, strict);
    for (std::size_t m = 0; m < metric_count; ++m)
      if (std::isfinite(v[m])) replicates[m].push_back(v[m]);
  }
  std::array<estimate*, metric_count> targets{&cells.pass_rate,
                                              &cells.faster_than_eager,
                                              &cells.faster_than_compile,
                                              &cells.geomean_vs_eager,
                                              &cells.geomean_vs_compile,
                                              &cells.geomean_vs_eager_all,
                                              &cells.geomean_vs_compile_all};
  const double tail = (1 - options.confidence) / 2;
  for (std::size_t m = 0; m < metric_count; ++m) {
    if (!std::isfinite(point[m])) continue;
    targets[m]->value = point[m];
    // Replicates where the metric is undefined (no correct evaluation drawn) are left out.
    if (replicates[m].size() >= 2)
      targets[m]->ci = {stats::percentile(replicates[m], tail), stats::percentile(replicates[m], 1 - tail)};
  }
  return cells;
}

std::vector<cluster> clusters_of(const std::vector<const result_row*>& rows) {
  std::map<std::string, cluster> by_problem;
  for (const result_row* r : rows)
    by_problem[r->problem_key()].push_back(r);
  std::vector<cluster> out;
  for (auto& [key, c] : by_problem)
    out.push_back(std::move(c));
  return out;
}

std::optional<double> optional_number(const nlohmann::json& row, const char* field,
                                      const std::string& origin) {
  if (!row.contains(field) || row[field].is_null()) return std::nullopt;
  if (!row[field].is_number())
    throw std::runtime_error(fmt::format("{}: field '{}' of a row must be a number", origin, field));
  return row[field].get<double>();
}

} // namespace

table1 paper_table(const std::vector<result_row>& rows, bool strict,
                   const stats::bootstrap_options& options) {
  table1 out;
  out.basis = strict ? "strict" : "compatible";
  std::map<std::string, std::map<int, std::vector<const result_row*>>> groups;
  for (const auto& r : rows)
    if (r.judged()) groups[r.producer][r.level].push_back(&r); // kj's or the problem's failure: in no rate
  for (const auto& [producer, levels] : groups) {
    std::vector<const result_row*> all;
    for (const auto& [level, members] : levels)
      all.insert(all.end(), members.begin(), members.end());
    const std::string key = fmt::format("table1/{}/{}", out.basis, producer);
    out.rows.push_back({producer, "overall", cells_for(clusters_of(all), strict, options, key + "/overall")});
    for (const auto& [level, members] : levels)
      out.rows.push_back(
          {producer, fmt::format("L{}", level),
           cells_for(clusters_of(members), strict, options, fmt::format("{}/L{}", key, level))});
  }
  return out;
}

published_table parse_published_table(const std::string& json_text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", origin, e.what()));
  }
  if (!doc.is_object() || !doc.contains("rows") || !doc["rows"].is_array())
    throw std::runtime_error(fmt::format("{}: expected an object with an array 'rows'", origin));
  published_table t;
  t.source = doc.value("source", "");
  t.protocol = doc.value("protocol", "");
  for (const auto& note : doc.value("notes", nlohmann::json::array()))
    t.notes.push_back(note.get<std::string>());
  for (const auto& row : doc["rows"]) {
    if (!row.contains("system") || !row["system"].is_string() || !row.contains("level") ||
        !row["level"].is_string())
      throw std::runtime_error(fmt::format("{}: every row needs the strings 'system' and 'level'", origin));
    t.rows.push_back({row["system"], row["level"], optional_number(row, "tasks", origin),
                      optional_number(row, "pass_rate", origin),
                      optional_number(row, "faster_than_eager", origin),
                      optional_number(row, "faster_than_compile", origin),
                      optional_number(row, "geomean_vs_eager", origin),
                      optional_number(row, "geomean_vs_compile", origin)});
  }
  return t;
}

published_table published_table1() {
  return parse_published_table(std::string(data::paper_table1_json), "reports/data/paper_table1.json");
}

} // namespace kj::reports
