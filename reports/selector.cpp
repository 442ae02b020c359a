// The side selectors of `kj compare` ("run=ID,producer=NAME,stack=HASH"): parsed, resolved against the DB,
// and described for the comparison's provenance.
#include "reports/compare.hpp"

#include <fmt/format.h>
#include <set>
#include <stdexcept>

namespace kj::reports {

namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

db::evaluation_filter parse_selector(const db::store& store, const std::string& selector) {
  db::evaluation_filter filter;
  if (selector.empty()) throw std::invalid_argument("an empty selector (expected a run id or KEY=VALUE,...)");
  for (const auto& term : split(selector, ',')) {
    const std::size_t eq = term.find('=');
    const std::string key = eq == std::string::npos ? "run" : term.substr(0, eq);
    const std::string value = eq == std::string::npos ? term : term.substr(eq + 1);
    if (value.empty())
      throw std::invalid_argument(fmt::format("selector '{}': '{}' has no value", selector, term));
    if (key == "run")
      filter.run_uid = value;
    else if (key == "producer")
      filter.producer = value;
    else if (key == "stack")
      filter.stack_hash = value;
    else
      throw std::invalid_argument(
          fmt::format("selector '{}': unknown key '{}' (expected run, producer or stack)", selector, key));
  }
  if (filter.run_uid == "latest") {
    const auto latest = store.latest_run_uid();
    if (!latest)
      throw std::invalid_argument(
          fmt::format("selector '{}': no runs in {}", selector, store.path().string()));
    filter.run_uid = *latest;
  }
  if (!filter.run_uid.empty() && !store.find_run(filter.run_uid))
    throw std::invalid_argument(
        fmt::format("selector '{}': no run '{}' in {}", selector, filter.run_uid, store.path().string()));
  return filter;
}

} // namespace

std::vector<result_row> select_rows(const db::store& store, const std::string& selector,
                                    const metric_options& options, compare_side& side) {
  const db::evaluation_filter filter = parse_selector(store, selector);
  std::vector<result_row> rows;
  for (const auto& row : store.evaluation_rows(filter))
    rows.push_back(derive(row, options));
  if (rows.empty())
    throw std::invalid_argument(
        fmt::format("selector '{}' matches no evaluation in {}", selector, store.path().string()));
  side.selector = selector;
  side.db = store.path().string();
  side.evaluations = rows.size();
  std::set<std::string> runs, stacks, producers;
  for (const auto& r : rows) {
    runs.insert(r.run_uid);
    stacks.insert(r.stack_hash);
    producers.insert(r.producer);
  }
  side.runs.assign(runs.begin(), runs.end());
  side.stacks.assign(stacks.begin(), stacks.end());
  side.producers.assign(producers.begin(), producers.end());
  return rows;
}

} // namespace kj::reports
