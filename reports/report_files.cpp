// The machine-readable half of `kj report`: report.json and the CSV files, the same numbers as index.html.
#include "reports/report.hpp"
#include "reports/results_table.hpp"

#include <fmt/format.h>
#include <fstream>
#include <map>
#include <sstream>

namespace kj::reports::detail {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json optional_json(const std::optional<double>& v) {
  return v ? json(*v) : json();
}

json rate_json(const rate& r) {
  return {{"count", r.count}, {"total", r.total}, {"value", optional_json(r.value())}};
}

json level_json(int level) {
  return level == all_levels ? json("all") : json(level);
}

json estimate_json(const estimate& e) {
  return {{"value", optional_json(e.value)},
          {"ci", e.ci.valid() ? json::array({e.ci.low, e.ci.high}) : json()}};
}

json leaderboard_json(const report_data& data) {
  std::map<std::int64_t, const result_row*> by_id;
  for (const auto& r : data.rows)
    by_id[r.evaluation_id] = &r;
  json out = json::array();
  for (const auto& row : data.board) {
    json baselines = json::object();
    for (const auto& c : row.baselines)
      baselines[c.baseline] = {{"with_speedup", c.with_speedup},
                               {"faster", rate_json(c.faster)},
                               {"faster_noise_aware", rate_json(c.faster_noise_aware)},
                               {"geomean_correct", optional_json(c.geomean_correct)},
                               {"geomean_all", optional_json(c.geomean_all)},
                               {"fast_p", c.fast_p}};
    std::vector<const result_row*> members;
    for (auto id : row.evaluation_ids)
      members.push_back(by_id.at(id));
    out.push_back({{"producer", row.producer},
                   {"level", level_json(row.level)},
                   {"evaluations", row.evaluations},
                   {"not_judged", row.not_judged},
                   {"problems", row.problems},
                   {"pass_compatible", rate_json(row.pass_compatible)},
                   {"pass_strict", rate_json(row.pass_strict)},
                   {"baselines", baselines},
                   {"verdicts", row.verdicts},
                   {"crashes", row.crashes},
                   {"timeouts", row.timeouts},
                   {"with_usage", row.with_usage},
                   {"tokens_per_solved", optional_json(row.tokens_per_solved)},
                   {"cost_per_solved_usd", optional_json(row.cost_per_solved)},
                   {"evaluation_ids", row.evaluation_ids},
                   {"provenance", provenance_text(members)}});
  }
  return out;
}

json table1_json(const table1& t) {
  json rows = json::array();
  for (const auto& row : t.rows) {
    const auto& c = row.cells;
    rows.push_back({{"system", row.system},
                    {"level", row.level},
                    {"problems", c.problems},
                    {"evaluations", c.evaluations},
                    {"pass_rate", estimate_json(c.pass_rate)},
                    {"faster_than_eager", estimate_json(c.faster_than_eager)},
                    {"faster_than_compile", estimate_json(c.faster_than_compile)},
                    {"geomean_vs_eager", estimate_json(c.geomean_vs_eager)},
                    {"geomean_vs_compile", estimate_json(c.geomean_vs_compile)},
                    {"geomean_vs_eager_failures_as_1", estimate_json(c.geomean_vs_eager_all)},
                    {"geomean_vs_compile_failures_as_1", estimate_json(c.geomean_vs_compile_all)}});
  }
  return {{"basis", t.basis}, {"rows", rows}};
}

json published_json(const published_table& p) {
  json rows = json::array();
  for (const auto& r : p.rows)
    rows.push_back({{"system", r.system},
                    {"level", r.level},
                    {"tasks", optional_json(r.tasks)},
                    {"pass_rate", optional_json(r.pass_rate)},
                    {"faster_than_eager", optional_json(r.faster_than_eager)},
                    {"faster_than_compile", optional_json(r.faster_than_compile)},
                    {"geomean_vs_eager", optional_json(r.geomean_vs_eager)},
                    {"geomean_vs_compile", optional_json(r.geomean_vs_compile)}});
  return {{"source", p.source}, {"protocol", p.protocol}, {"notes", p.notes}, {"rows", rows}};
}

std::string number(const std::optional<double>& v) {
  return v ? fmt::format("{}", *v) : "";
}

std::string estimate_csv(const estimate& e) {
  return fmt::format("{},{},{}", number(e.value), e.ci.valid() ? fmt::format("{}", e.ci.low) : "",
                     e.ci.valid() ? fmt::format("{}", e.ci.high) : "");
}

void write_file(const fs::path& path, const std::string& text, std::vector<fs::path>& written) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
  written.push_back(path);
}

std::string leaderboard_csv(const report_data& data) {
  std::string out = "producer,level,evaluations,problems,pass_compatible,pass_strict";
  for (const auto& b : leaderboard_baselines)
    out += fmt::format(
        ",with_speedup_{0},faster_{0},faster_noise_aware_{0},geomean_correct_{0},geomean_all_{0}", b);
  out += ",crashed,timeout,tokens_per_solved,cost_per_solved_usd,not_judged\n";
  for (const auto& row : data.board) {
    out += fmt::format("{},{},{},{},{},{}", csv_field(row.producer),
                       row.level == all_levels ? "all" : fmt::format("{}", row.level), row.evaluations,
                       row.problems, number(row.pass_compatible.value()), number(row.pass_strict.value()));
    for (const auto& c : row.baselines)
      out +=
          fmt::format(",{},{},{},{},{}", c.with_speedup, number(c.faster.value()),
                      number(c.faster_noise_aware.value()), number(c.geomean_correct), number(c.geomean_all));
    out += fmt::format(",{},{},{},{},{}\n", row.crashes, row.timeouts, number(row.tokens_per_solved),
                       number(row.cost_per_solved), row.not_judged);
  }
  return out;
}

std::string table1_csv(const report_data& data) {
  std::string out =
      "basis,system,level,problems,pass_rate,pass_rate_low,pass_rate_high,faster_than_eager,"
      "faster_than_eager_low,faster_than_eager_high,faster_than_compile,faster_than_compile_low,"
      "faster_than_compile_high,geomean_vs_eager,geomean_vs_eager_low,geomean_vs_eager_high,"
      "geomean_vs_compile,geomean_vs_compile_low,geomean_vs_compile_high\n";
  for (const table1* t : {&data.table_compatible, &data.table_strict})
    for (const auto& row : t->rows) {
      const auto& c = row.cells;
      out += fmt::format("{},{},{},{},{},{},{},{},{}\n", t->basis, csv_field(row.system), row.level,
                         c.problems, estimate_csv(c.pass_rate), estimate_csv(c.faster_than_eager),
                         estimate_csv(c.faster_than_compile), estimate_csv(c.geomean_vs_eager),
                         estimate_csv(c.geomean_vs_compile));
    }
  for (const auto& p : data.published.rows)
    out +=
        fmt::format("published,{},{},{},{},,,{},,,{},,,{},,,{},,\n", csv_field(p.system), p.level,
                    number(p.tasks), number(p.pass_rate), number(p.faster_than_eager),
                    number(p.faster_than_compile), number(p.geomean_vs_eager), number(p.geomean_vs_compile));
  return out;
}

std::string fast_p_csv(const report_data& data) {
  std::string out = "producer,level,baseline,p,fast_p\n";
  const auto grid = fast_p_grid();
  for (const auto& row : data.board)
    for (const auto& c : row.baselines)
      for (std::size_t i = 0; i < grid.size(); ++i)
        out += fmt::format("{},{},{},{:.2f},{}\n", csv_field(row.producer),
                           row.level == all_levels ? "all" : fmt::format("{}", row.level), c.baseline,
                           grid[i], c.fast_p[i]);
  return out;
}

} // namespace

json report_json(const report_data& data) {
  json runs = json::array(), stacks = json::array(), problems = json::array();
  for (const auto& r : data.runs)
    runs.push_back({{"run", r.run_uid},
                    {"created_at", r.created_at},
                    {"status", r.status},
                    {"device", r.device},
                    {"command_line", r.command_line},
                    {"kj_version", r.kj_version},
                    {"stack", r.stack_hash},
                    {"evaluations", r.evaluations}});
  for (const auto& [id, s] : data.stacks)
    stacks.push_back({{"stack", s.stack_hash},
                      {"python", s.python},
                      {"torch", s.torch},
                      {"device_name", s.device_name},
                      {"fingerprint", json::parse(s.fingerprint_json, nullptr, false)}});
  for (const auto& r : data.rows)
    problems.push_back(result_json(r));
  return {{"format", "kj-report"},
          {"format_version", report_format_version},
          {"generated_at", data.generated_at},
          {"kj_version", data.kj_version},
          {"db", data.db_path.string()},
          {"runs", runs},
          {"stacks", stacks},
          {"fast_p_grid", fast_p_grid()},
          {"leaderboard", leaderboard_json(data)},
          {"table1",
           {{"compatible", table1_json(data.table_compatible)},
            {"strict", table1_json(data.table_strict)},
            {"published", published_json(data.published)}}},
          {"problems", problems}};
}

void write_csvs(const report_data& data, const fs::path& dir, std::vector<fs::path>& written) {
  write_file(dir / "leaderboard.csv", leaderboard_csv(data), written);
  std::ostringstream problems;
  write_results(data.rows, "csv", problems);
  write_file(dir / "problems.csv", problems.str(), written);
  write_file(dir / "table1.csv", table1_csv(data), written);
  write_file(dir / "fast_p.csv", fast_p_csv(data), written);
}

} // namespace kj::reports::detail
