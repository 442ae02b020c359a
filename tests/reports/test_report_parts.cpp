// Parts of the report that the fixture run does not reach: the note instead of charts without Chart.js,
// token and cost columns once a producer records usage, escaping and the JSON data island.
#include "reports/html.hpp"
#include "reports/leaderboard.hpp"
#include "reports/report.hpp"
#include "reports/report_sections.hpp"
#include "tests/db/db_fixtures.hpp"
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"

#include <algorithm>

using namespace kj::test::reports;

namespace {

kj::reports::report_data fixture_report(const kj::test::scratch_dir& dir) {
  build_report_db(dir / "kj.sqlite");
  const auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  kj::reports::report_options options;
  options.metrics.bootstrap.replicates = 200;
  return kj::reports::build_report(store, options);
}

} // namespace

TEST_CASE("without Chart.js the report says so and names the package instead of drawing") {
  kj::test::scratch_dir dir;
  const auto data = fixture_report(dir);
  const std::string html = kj::reports::detail::charts_section(data, "", {"/nowhere/chart.umd.js"}, "n0nce");
  CHECK(html.find("libjs-chart.js") != std::string::npos);
  CHECK(html.find("/nowhere/chart.umd.js") != std::string::npos);
  CHECK(html.find("<canvas") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  const std::string drawn = kj::reports::detail::charts_section(data, "/* chart.js */", {}, "n0nce");
  CHECK(drawn.find("<canvas id=\"kj-fastp\"") != std::string::npos);
  CHECK(drawn.find("<script nonce=\"n0nce\">") != std::string::npos);
  // A requested file that is missing is reported as tried, not silently replaced.
  const auto found = kj::reports::html::find_chartjs((dir / "absent.js").string());
  CHECK(found.path.empty());
  REQUIRE(found.tried.size() == 1);
}

TEST_CASE("tokens and cost per solved problem appear when candidates have usage") {
  kj::test::scratch_dir dir;
  const auto data = fixture_report(dir);
  kj::reports::usage_map usage;
  for (const auto& r : data.rows)
    if (r.producer == "claude") usage[r.candidate_id] = {1000, 500, 0.02};
  const auto board = kj::reports::leaderboard(data.rows, usage);
  for (const auto& row : board) {
    INFO(row.producer << " " << row.level);
    if (row.producer == "claude" && row.level == kj::reports::all_levels) {
      // 7 candidates of 1500 tokens and $0.02 each; 5 counted correct.
      CHECK(row.with_usage == 7);
      CHECK(*row.tokens_per_solved == Approx(7 * 1500.0 / 5));
      CHECK(*row.cost_per_solved == Approx(7 * 0.02 / 5));
    }
    if (row.producer == "agent") {
      CHECK_FALSE(row.tokens_per_solved.has_value());
      CHECK_FALSE(row.cost_per_solved.has_value());
    }
  }
}

TEST_CASE("html escaping and the JSON island keep model text inert") {
  using kj::reports::html::escape;
  CHECK(escape(payload) == "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(escape("a\"b'c&d") == "a&quot;b&#39;c&amp;d");
  const std::string island = kj::reports::html::json_island({{"name", payload + "<!--"}}, "x");
  CHECK(island.find("</script><script>") == std::string::npos);
  CHECK(island.find("<!--") == std::string::npos);
  CHECK(island.find("\\u003c/script\\u003e") != std::string::npos);
  CHECK(island.rfind("</script>") == island.size() - std::string("</script>\n").size()); // only the real end
}

TEST_CASE("an agent result's page shows its trajectory, every model-written text escaped") {
  namespace tdb = kj::test::db;
  kj::test::scratch_dir dir;
  auto store = kj::db::store::open(dir / "kj.sqlite");
  const auto stack = store.upsert_stack(tdb::make_stack());
  const auto run = store.create_run(tdb::make_run("agent-run", stack));
  const auto problem = store.upsert_problem(tdb::make_problem(1, 2));
  const auto candidate = store.upsert_candidate(tdb::make_candidate(problem, 0));
  const auto result = store.insert_evaluation(tdb::make_evaluation(run, problem, candidate, stack));
  kj::db::trajectory_record t{.run_id = run, .problem_id = problem, .producer = "agent/openai/m"};
  t.system_prompt = "skill " + payload;
  t.status = "submitted";
  t.turns = 1;
  t.result_evaluation_id = result;
  t.inloop_speedup = 2.0;
  t.remeasured_speedup = 1.6;
  t.id = store.insert_trajectory(t);
  store.update_trajectory(t);
  store.insert_turn(
      {.trajectory_id = t.id, .turn = 1, .text = "I write " + payload, .thinking = payload},
      {{.seq = 0, .tool = "read_file", .arguments_json = "{}", .result = payload, .summary = payload}});

  const std::string html = kj::reports::detail::trajectory_section(store, result);
  INFO(html);
  CHECK(html.find("Trajectory " + std::to_string(t.id)) != std::string::npos);
  CHECK(html.find("<h3>turn 1</h3>") != std::string::npos);
  CHECK(html.find("selection inflated it 1.25x") != std::string::npos);
  CHECK(html.find("&lt;/script&gt;&lt;script&gt;alert(1)") != std::string::npos);
  CHECK(html.find(payload) == std::string::npos); // nothing the model wrote is markup
  CHECK(kj::reports::detail::trajectory_section(store, result + 1).empty()); // not a trajectory's result
}

TEST_CASE("every blank cell of the report's tables says why it is blank") {
  kj::test::scratch_dir dir;
  const auto data = fixture_report(dir);
  const std::string page = kj::reports::detail::index_html(data, "", {});
  for (const char* id : {"<h2 id=\"leaderboard\"", "<h2 id=\"problems\""}) {
    INFO(id);
    const std::size_t from = page.find(id);
    REQUIRE(from != std::string::npos);
    const std::string html = page.substr(from, page.find("</table>", from) - from);
    std::size_t at = 0, blanks = 0;
    while ((at = html.find(kj::reports::html::missing, at)) != std::string::npos) {
      ++blanks;
      // the cell's text is wrapped in a span whose title gives the reason
      CHECK(html.rfind("<span title=\"", at) != std::string::npos);
      CHECK(html.substr(at - 2, 2) == "\">");
      at += 1;
    }
    CHECK(blanks > 0); // the fixture has untimed and unused columns
    // and no cell is left empty without a word (a reviewer found the findings column so)
    CHECK(html.find("<td class=\"l\"></td>") == std::string::npos);
    CHECK(html.find("<td></td>") == std::string::npos);
  }
}

TEST_CASE("a timed speedup kj does not trust says so in its cells and its page, with the reference's time") {
  kj::test::scratch_dir dir;
  auto data = fixture_report(dir);
  auto it = std::find_if(data.rows.begin(), data.rows.end(),
                         [](const auto& r) { return r.candidate && r.reference && !r.baselines.empty(); });
  REQUIRE(it != data.rows.end());
  // what derive() makes of a timing whose timed outputs were wrong: no speedup credited (review 11 W3)
  it->untrusted = "the outputs of its timed calls were wrong (timed_outputs)";
  it->baselines.clear();
  it->speedup.reset();
  it->speedup_best.reset();
  it->device = "cpu"; // and a CPU run's peak memory has no device part: the page says so (review 11 U10)
  it->memory = kj::db::memory_record{};
  it->memory->judge_rss_bytes = 1 << 30;
  const std::string index = kj::reports::detail::index_html(data, "", {});
  CHECK(index.find("title=\"no speedup: time not trusted: the outputs of its timed calls were wrong") !=
        std::string::npos);
  const auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  const std::string page = kj::reports::detail::evaluation_page(store, data, *it);
  CHECK(page.find("reference (eager, same run)") != std::string::npos);
  CHECK(page.find("No speedup: the time is not trusted: the outputs of its timed calls") !=
        std::string::npos);
  CHECK(page.find("device: none (a CPU run); host judge 1.00 GiB, runner -; budget: not recorded") !=
        std::string::npos);
}

TEST_CASE("an evaluation page leaves no cell empty without a word: a passing case says it passed") {
  kj::test::scratch_dir dir;
  const auto data = fixture_report(dir);
  const auto store = kj::db::store::open_read_only(dir / "kj.sqlite");
  std::size_t with_cases = 0;
  for (const auto& row : data.rows) {
    const std::string page = kj::reports::detail::evaluation_page(store, data, row);
    INFO(row.problem_name << " " << row.producer);
    CHECK(page.find("<td class=\"l\"></td>") == std::string::npos); // review 12 W1
    CHECK(page.find("<td></td>") == std::string::npos);
    if (page.find("passed: nothing to report") != std::string::npos) ++with_cases;
  }
  CHECK(with_cases > 0);
}

TEST_CASE("the report marks a host-bound speedup h with its GPU busy share, and a device-bound one not") {
  kj::test::scratch_dir dir;
  auto data = fixture_report(dir);
  auto timed = [](const auto& r) { return r.speedup && r.counted_correct() && r.untrusted.empty(); };
  auto it = std::find_if(data.rows.begin(), data.rows.end(), timed);
  REQUIRE(it != data.rows.end());
  it->gpu_busy_share = 0.24;
  const auto other = std::find_if(std::next(it), data.rows.end(), timed);
  REQUIRE(other != data.rows.end());
  other->gpu_busy_share = 0.97;
  const std::string index = kj::reports::detail::index_html(data, "", {});
  CHECK(index.find("title=\"host-bound: the candidate kept the GPU busy 24% of its timed window") !=
        std::string::npos);
  CHECK(index.find("busy 97%") == std::string::npos);
  CHECK(
      index.find("an <code>h</code> marks a host-bound speedup (the candidate kept the GPU busy under 75%") !=
      std::string::npos);
}
