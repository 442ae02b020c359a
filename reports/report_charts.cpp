// The charts of index.html: fast_p curves per producer (a baseline selector) and each problem's speedup
// against its best baseline, drawn by the inlined Chart.js from a JSON data island.
#include "reports/html.hpp"
#include "reports/report_sections.hpp"

#include <fmt/format.h>
#include <map>

namespace kj::reports::detail {

namespace {

using nlohmann::json;

// Static code (no data in it): reads the island, draws, and leaves evidence for tests on <body>: how many
// charts were drawn, how many pixels each inked, and how many script errors happened.
constexpr const char* chart_script = R"js(
(function () {
  var errors = 0;
  window.addEventListener('error', function () { errors++; document.body.dataset.errors = String(errors); });
  var data = JSON.parse(document.getElementById('kj-chart-data').textContent);
  var colors = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
  var producers = Object.keys(data.fast_p);
  function color(i) { return colors[i % colors.length]; }
  function fastDatasets(baseline) {
    return producers.map(function (p, i) {
      return { label: p, data: data.fast_p[p][baseline] || [], borderColor: color(i), backgroundColor: color(i),
               pointRadius: 0, borderWidth: 2 };
    });
  }
  var select = document.getElementById('kj-fastp-baseline');
  var fast = new Chart(document.getElementById('kj-fastp'), {
    type: 'line',
    data: { labels: data.grid.map(function (p) { return p.toFixed(2); }), datasets: fastDatasets(select.value) },
    options: { animation: false, responsive: false,
               plugins: { title: { display: true, text: 'fast_p: share of evaluations correct with speedup > p' } },
               scales: { y: { min: 0, max: 1 }, x: { title: { display: true, text: 'p' } } } }
  });
  select.addEventListener('change', function () { fast.data.datasets = fastDatasets(select.value); fast.update(); });
  var bars = new Chart(document.getElementById('kj-speedups'), {
    type: 'bar',
    data: { labels: data.speedups.labels,
            datasets: producers.map(function (p, i) {
              return { label: p, data: data.speedups.values[p] || [], backgroundColor: color(i) };
            }) },
    options: { animation: false, responsive: false,
               plugins: { title: { display: true, text: 'speedup vs the best baseline (correct evaluations, best sample)' } },
               scales: { y: { type: 'logarithmic' } } }
  });
  function inked(chart) {
    var c = chart.canvas, d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0;
    for (var i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  }
  document.body.dataset.charts = '2';
  document.body.dataset.inked = [inked(fast), inked(bars)].join(',');
})();
)js";

json chart_data(const report_data& data, std::vector<std::string>& baselines_with_data) {
  json d;
  d["grid"] = fast_p_grid();
  d["fast_p"] = json::object();
  std::map<std::string, bool> has_data;
  for (const auto& row : data.board) {
    if (row.level != all_levels) continue;
    for (const auto& c : row.baselines) {
      d["fast_p"][row.producer][c.baseline] = c.fast_p;
      has_data[c.baseline] = has_data[c.baseline] || c.with_speedup > 0;
    }
  }
  for (const auto& b : leaderboard_baselines)
    if (has_data[b]) baselines_with_data.push_back(b);
  // One bar per problem and producer: its best counted sample.
  std::vector<std::string> labels;
  std::map<std::string, std::size_t> label_index;
  std::map<std::string, std::map<std::size_t, double>> best;
  for (const auto& r : data.rows) {
    const std::string label = fmt::format("L{} {} {}", r.level, r.number, r.problem_name);
    if (!label_index.contains(label)) {
      label_index[label] = labels.size();
      labels.push_back(label);
    }
    if (!r.counted_correct() || !r.speedup_best) continue;
    double& slot = best[r.producer][label_index[label]];
    slot = std::max(slot, *r.speedup_best);
  }
  d["speedups"]["labels"] = labels;
  d["speedups"]["values"] = json::object();
  for (const auto& row : data.board) {
    if (row.level != all_levels) continue;
    json values = json::array();
    for (std::size_t i = 0; i < labels.size(); ++i)
      values.push_back(best[row.producer].contains(i) ? json(best[row.producer][i]) : json());
    d["speedups"]["values"][row.producer] = values;
  }
  return d;
}

} // namespace

std::string charts_section(const report_data& data, const std::string& chartjs_text,
                           const std::vector<std::string>& chartjs_tried, const std::string& nonce) {
  std::string out = "<h2 id=\"charts\">Charts</h2>\n";
  if (chartjs_text.empty()) {
    std::string tried;
    for (const auto& t : chartjs_tried)
      tried += (tried.empty() ? "" : ", ") + t;
    return out +
           fmt::format("<p class=\"note\" id=\"kj-no-charts\">Charts are left out: Chart.js was not found. "
                       "Install the Debian/Ubuntu package <code>libjs-chart.js</code> (or pass "
                       "<code>kj report --chartjs FILE</code> / set <code>KJ_CHARTJS</code>) and run "
                       "<code>kj report</code> again. Looked at: {}. Every number is in the tables below "
                       "and in fast_p.csv.</p>\n",
                       html::escape(tried));
  }
  std::vector<std::string> baselines;
  const json d = chart_data(data, baselines);
  if (baselines.empty()) baselines.push_back("eager");
  out += "<p class=\"prov\">fast_p against <select id=\"kj-fastp-baseline\">";
  for (const auto& b : baselines)
    out += fmt::format("<option value=\"{0}\">{0}</option>", html::escape(b));
  out +=
      "</select> (KernelBench's fast_p: the share of <i>all</i> evaluations that are correct and faster than "
      "p times the baseline; fast_0 is the pass rate of timed evaluations).</p>\n";
  out +=
      "<div class=\"charts\"><canvas id=\"kj-fastp\" class=\"chart\" width=\"580\" height=\"320\"></canvas>"
      "<canvas id=\"kj-speedups\" class=\"chart\" width=\"580\" height=\"320\"></canvas></div>\n";
  out += html::json_island(d, "kj-chart-data");
  out += fmt::format("<script nonce=\"{}\">\n{}\n</script>\n", html::escape(nonce), chartjs_text);
  out += fmt::format("<script nonce=\"{}\">{}</script>\n", html::escape(nonce), chart_script);
  return out;
}

} // namespace kj::reports::detail
