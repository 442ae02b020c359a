// Implements `kj history` (see history.hpp).
#include "reports/history.hpp"

#include "reports/results_table.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <regex>
#include <stdexcept>

namespace kj::reports {

namespace {

db::evaluation_filter filter_for(const std::string& problem, const std::string& producer) {
  db::evaluation_filter filter;
  filter.producer = producer;
  std::smatch m;
  static const std::regex level_id(R"((\d+):(\d+))"), stem(R"(\d+_.*)");
  if (std::regex_match(problem, m, level_id)) {
    filter.level = std::stoi(m[1]);
    filter.number = std::stoi(m[2]);
  } else if (problem.ends_with(".py")) {
    filter.problem = problem;
  } else if (std::regex_match(problem, stem)) {
    filter.problem = problem + ".py";
  } else {
    filter.problem = problem;
  }
  return filter;
}

std::string group_of(const result_row& r) {
  return fmt::format("{}/{}/{}", r.sized_problem_key(), r.producer, r.sample);
}

} // namespace

std::vector<history_entry> history(const db::store& store, const std::string& problem,
                                   const std::string& producer, const metric_options& metrics,
                                   const compare_options& options) {
  if (problem.empty()) throw std::invalid_argument("no problem named (LEVEL:ID, a file name or a name)");
  std::vector<history_entry> entries;
  std::map<std::int64_t, db::stack_record> stacks;
  for (const auto& row : store.evaluation_rows(filter_for(problem, producer))) {
    history_entry e{derive(row, metrics), {}, {}, std::nullopt};
    if (!stacks.contains(row.stack_id))
      if (auto s = store.get_stack(row.stack_id)) stacks.emplace(row.stack_id, *s);
    if (stacks.contains(row.stack_id)) {
      e.torch = stacks.at(row.stack_id).torch;
      e.device_name = stacks.at(row.stack_id).device_name;
    }
    entries.push_back(std::move(e));
  }
  if (entries.empty())
    throw std::invalid_argument(fmt::format("no evaluation of problem '{}'{} in {}", problem,
                                            producer.empty() ? "" : " by producer '" + producer + "'",
                                            store.path().string()));
  std::stable_sort(entries.begin(), entries.end(), [](const history_entry& a, const history_entry& b) {
    const auto ka = group_of(a.row), kb = group_of(b.row);
    if (ka != kb) return ka < kb;
    return std::tie(a.row.run_created_at, a.row.evaluation_id) <
           std::tie(b.row.run_created_at, b.row.evaluation_id);
  });
  std::map<std::string, const history_entry*> previous; // by candidate source within each group
  for (auto& e : entries) {
    const std::string key = group_of(e.row) + "/" + e.row.candidate_hash;
    if (auto it = previous.find(key); it != previous.end()) {
      const comparison c = compare({it->second->row}, {e.row}, options);
      if (!c.rows.empty()) e.change = c.rows.front();
    }
    previous[key] = &e;
  }
  return entries;
}

namespace {

std::string change_text(const history_entry& e) {
  if (!e.change) return "";
  const auto& c = *e.change;
  if (!c.ratio) return change_name(c.verdict);
  if (!c.ci.valid()) return fmt::format("x{:.4f} {}", *c.ratio, change_name(c.verdict));
  return fmt::format("x{:.4f} [{:.4f}, {:.4f}] {}", *c.ratio, c.ci.low, c.ci.high, change_name(c.verdict));
}

std::string candidate_ms(const result_row& r) {
  if (!r.candidate) return "";
  if (!r.candidate->ci_ms.valid())
    return fmt::format("{:.4g} n={}", r.candidate->ms, r.candidate->samples_ms.size());
  return fmt::format("{:.4g} [{:.4g}, {:.4g}] n={}", r.candidate->ms, r.candidate->ci_ms.low,
                     r.candidate->ci_ms.high, r.candidate->samples_ms.size());
}

} // namespace

std::string history_text(const std::vector<history_entry>& entries) {
  std::string out =
      fmt::format("{:<24} {:<22} {:<16} {:<18} {:<14} {:>3} {:<14} {:>34} {:>9} {:>9}  {}\n", "date", "run",
                  "stack", "torch", "producer", "s", "verdict", "candidate ms [95% CI]", "eager ms",
                  "speedup", "change vs previous (same source)");
  std::string problem; // one heading per problem, however many producers and samples follow
  for (const auto& e : entries) {
    const result_row& r = e.row;
    if (r.problem_key() != problem) // the suite and version tell apart problems of one name (review 11 U4)
      out += fmt::format("-- L{} {} {} ({}{})\n", r.level, r.number, r.problem_name, r.suite,
                         r.kb_version.empty() ? "" : " " + r.kb_version);
    problem = r.problem_key();
    out += fmt::format(
        "{:<24} {:<22} {:<16} {:<18} {:<14} {:>3} {:<14} {:>34} {:>9} {:>9}  {}\n", r.run_created_at,
        r.run_uid.substr(0, 22), r.stack_hash.substr(0, 16), e.torch.substr(0, 18), r.producer.substr(0, 14),
        r.sample,
        r.counted_correct()                 ? "correct"
        : r.verdict == kj::verdict::correct ? "strict fail"
                                            : name_of(r.verdict),
        candidate_ms(r), r.reference_median_ms ? fmt::format("{:.4g}", *r.reference_median_ms) : "",
        r.speedup ? fmt::format("{:.3f}x{}", *r.speedup, may_be_noise(r) ? "~" : "") : "", change_text(e));
  }
  return out;
}

std::string history_csv(const std::vector<history_entry>& entries) {
  std::string out =
      "run_created_at,run,stack,torch,device_name,level,problem_id,problem,producer,sample,verdict,"
      "strict_verdict,candidate_ms,candidate_ci_low_ms,candidate_ci_high_ms,candidate_samples,"
      "reference_ms,speedup,speedup_noisy,change_ratio,change_ci_low,change_ci_high,change_class,"
      "evaluation_id,sizes\n";
  const auto num = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : std::string(); };
  for (const auto& e : entries) {
    const result_row& r = e.row;
    const bool ci = r.candidate && r.candidate->ci_ms.valid();
    const bool cci = e.change && e.change->ci.valid();
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       r.run_created_at, csv_field(r.run_uid), r.stack_hash, csv_field(e.torch),
                       csv_field(e.device_name), r.level, r.number, csv_field(r.problem_name),
                       csv_field(r.producer), r.sample, name_of(r.verdict), name_of(r.strict_verdict),
                       num(r.candidate_median_ms), ci ? fmt::format("{}", r.candidate->ci_ms.low) : "",
                       ci ? fmt::format("{}", r.candidate->ci_ms.high) : "",
                       r.candidate ? fmt::format("{}", r.candidate->samples_ms.size()) : "",
                       num(r.reference_median_ms), num(r.speedup),
                       r.speedup ? (may_be_noise(r) ? "true" : "false") : "",
                       e.change ? num(e.change->ratio) : "", cci ? fmt::format("{}", e.change->ci.low) : "",
                       cci ? fmt::format("{}", e.change->ci.high) : "",
                       e.change ? change_name(e.change->verdict) : "", r.evaluation_id, csv_field(r.sizes));
  }
  return out;
}

nlohmann::json history_json(const std::vector<history_entry>& entries) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : entries) {
    nlohmann::json record = result_json(e.row);
    record["run_created_at"] = e.row.run_created_at;
    record["torch"] = e.torch;
    record["device_name"] = e.device_name;
    record["sizes"] =
        e.row.sizes.empty() ? nlohmann::json() : nlohmann::json::parse(e.row.sizes, nullptr, false);
    if (e.change) {
      const auto& c = *e.change;
      record["change"] = {
          {"class", change_name(c.verdict)},
          {"ratio", c.ratio ? nlohmann::json(*c.ratio) : nlohmann::json()},
          {"ci", c.ci.valid() ? nlohmann::json::array({c.ci.low, c.ci.high}) : nlohmann::json()},
          {"previous_evaluation_id", c.base_evaluation},
          {"reason", c.reason}};
    }
    out.push_back(record);
  }
  return out;
}

} // namespace kj::reports
