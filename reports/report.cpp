// `kj report`: selects the rows, derives every number once, and writes the folder (see report.hpp).
#include "reports/report.hpp"

#include "core/hashing.hpp"
#include "reports/html.hpp"
#include "reports/producer_labels.hpp"

#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

namespace kj::reports {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> chosen_runs(const db::store& store, const report_options& options) {
  if (options.all_runs) return {};
  if (options.runs.empty()) {
    const auto latest = store.latest_run_uid();
    if (!latest) throw std::invalid_argument("no runs in " + store.path().string());
    return {*latest};
  }
  for (const auto& run : options.runs)
    if (!store.find_run(run))
      throw std::invalid_argument(fmt::format("no run '{}' in {}", run, store.path().string()));
  return options.runs;
}

void write_text(const fs::path& path, const std::string& text, std::vector<fs::path>& written) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path.string());
  written.push_back(path);
}

template <class F>
std::string joined(const std::set<std::string>& items, F&& label) {
  std::string out;
  for (const auto& item : items)
    out += (out.empty() ? "" : ", ") + label(item);
  return out.empty() ? "none" : out;
}

} // namespace

report_data build_report(const db::store& store, const report_options& options) {
  report_data data;
  data.db_path = fs::absolute(store.path());
  data.generated_at = core::now_iso8601();
  data.kj_version = options.kj_version;
  data.usage = options.usage;
  const auto runs = chosen_runs(store, options);
  std::vector<result_row> rows;
  db::evaluation_filter filter;
  filter.producer = options.producer;
  for (const auto& run : runs.empty() ? std::vector<std::string>{""} : runs) {
    filter.run_uid = run;
    for (const auto& row : store.evaluation_rows(filter))
      rows.push_back(derive(row, options.metrics));
  }
  const std::vector<db::run_row> all_runs = store.runs();
  data.warnings = separate_colliding_producers(rows, all_runs);
  data.rows = newest_per_key(std::move(rows));
  mark_unsound_problems(store, data.rows);
  if (options.adjust_rows) options.adjust_rows(data.rows);
  std::set<std::string> used_runs;
  for (const auto& r : data.rows) {
    used_runs.insert(r.run_uid);
    if (!data.stacks.contains(r.stack_id))
      if (auto stack = store.get_stack(r.stack_id)) data.stacks.emplace(r.stack_id, *stack);
  }
  for (const auto& run : all_runs)
    if (used_runs.contains(run.run_uid) || (runs.size() == 1 && run.run_uid == runs[0]))
      data.runs.push_back(run);
  for (const auto& r : data.rows) // the generating calls' usage the rows carry (LLM candidates)
    if (r.output_tokens && !data.usage.contains(r.candidate_id))
      data.usage[r.candidate_id] = {static_cast<double>(r.input_tokens.value_or(0) +
                                                        r.cache_read_tokens.value_or(0) +
                                                        r.cache_write_tokens.value_or(0)),
                                    static_cast<double>(*r.output_tokens), r.cost_usd};
  data.board = leaderboard(data.rows, data.usage);
  data.table_compatible = paper_table(data.rows, false, options.metrics.bootstrap);
  data.table_strict = paper_table(data.rows, true, options.metrics.bootstrap);
  data.published = published_table1();
  return data;
}

namespace {

// A report written into the folder of an earlier one: the evaluation pages this one did not write
// (e/<id>.html, kj's own names) are removed, so that no page of another run is left beside the new index.
void remove_stale_pages(const fs::path& pages, const std::vector<fs::path>& written) {
  static const std::regex page(R"(\d+\.html)");
  const std::set<fs::path> mine(written.begin(), written.end());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(pages, ec))
    if (entry.is_regular_file(ec) && std::regex_match(entry.path().filename().string(), page) &&
        !mine.contains(entry.path()))
      fs::remove(entry.path(), ec);
}

} // namespace

report_output write_report(const db::store& store, const report_data& data, const report_options& options) {
  report_output output;
  fs::create_directories(options.out_dir / "e");
  const html::chartjs chart = html::find_chartjs(options.chartjs);
  output.chartjs = chart.path;
  output.chartjs_tried = chart.tried;
  write_text(options.out_dir / "index.html", detail::index_html(data, chart.text, chart.tried), output.files);
  for (const auto& row : data.rows)
    write_text(options.out_dir / "e" / fmt::format("{}.html", row.evaluation_id),
               detail::evaluation_page(store, data, row), output.files);
  write_text(options.out_dir / "report.json",
             detail::report_json(data).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
             output.files);
  detail::write_csvs(data, options.out_dir, output.files);
  remove_stale_pages(options.out_dir / "e", output.files);
  return output;
}

std::string provenance_text(const std::vector<const result_row*>& rows) {
  std::set<std::string> timers, statistics, dtypes, protocols, stacks, runs;
  std::int64_t first = 0, last = 0;
  for (const result_row* r : rows) {
    if (r->candidate) {
      timers.insert(r->candidate->method + "/" + r->candidate->clock);
      statistics.insert(stats::statistic_name(r->candidate->statistic));
    }
    dtypes.insert(kj::name_of(r->dtype));
    protocols.insert(r->protocol);
    stacks.insert(r->stack_hash);
    runs.insert(r->run_uid);
    first = first ? std::min(first, r->evaluation_id) : r->evaluation_id;
    last = std::max(last, r->evaluation_id);
  }
  const auto same = [](const std::string& s) { return s; };
  return fmt::format(
      "{} evaluations (ids {}–{}) of run(s) {}; timer {}; statistic {}; dtype {}; protocol {}; "
      "stack(s) {}",
      rows.size(), first, last, joined(runs, same), joined(timers, same), joined(statistics, same),
      joined(dtypes, same), joined(protocols, same), joined(stacks, same));
}

} // namespace kj::reports
