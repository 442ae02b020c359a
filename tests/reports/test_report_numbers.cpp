// `kj report` and `kj results` on the fixture DB: every checked number is recomputed here from the design
// table with the test's own code (not reports/), and must equal what the real `kj` wrote.
#include "tests/reports/report_fixture.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace kj::test;
using namespace kj::test::reports;
using nlohmann::json;

namespace {

struct expected {
  double n = 0, pass = 0, strict_pass = 0, faster = 0, noise_aware = 0;
  std::vector<double> correct_speedups; // counted correct with a speedup
  double geomean_correct() const {
    double s = 0;
    for (double x : correct_speedups)
      s += std::log(x);
    return std::exp(s / static_cast<double>(correct_speedups.size()));
  }
  double geomean_all() const { // failures (and correct ones without a speedup) as 1.0: log 1 = 0
    double s = 0;
    for (double x : correct_speedups)
      s += std::log(x);
    return std::exp(s / n);
  }
};

// The speedup a design row has against `baseline`, if any.
std::optional<double> speedup(const design_row& d, const std::string& baseline) {
  if (!d.candidate_ms) return std::nullopt;
  std::optional<double> base;
  if (baseline == "eager") base = d.reference_ms;
  if (baseline == "compile-default") base = d.compile_ms;
  if (baseline == "best")
    base = d.compile_ms && *d.compile_ms < *d.reference_ms ? d.compile_ms : d.reference_ms;
  if (!base) return std::nullopt;
  return *base / *d.candidate_ms;
}

// Leaderboard basis (strict): correct and strict not failed. Table 1 basis (compatible): correct.
expected expect(const std::string& producer, int level, const std::string& baseline, bool strict_basis) {
  expected e;
  for (const auto& d : design()) {
    if (d.producer != producer || (level != 0 && d.level != level)) continue;
    e.n += 1;
    const bool correct = d.verdict == "correct";
    e.pass += correct;
    e.strict_pass += correct && d.strict == "pass";
    const bool counted = strict_basis ? correct && d.strict != "fail" : correct;
    const auto s = counted ? speedup(d, baseline) : std::nullopt;
    if (!s) continue;
    e.correct_speedups.push_back(*s);
    e.faster += *s > 1;
    e.noise_aware += *s > 1 && d.spread <= 0.002; // the design promises tight samples there
  }
  return e;
}

const json& board_row(const json& report, const std::string& producer, const json& level) {
  for (const auto& row : report["leaderboard"])
    if (row["producer"] == producer && row["level"] == level) return row;
  FAIL("no leaderboard row " << producer << " " << level.dump());
  throw std::logic_error("unreachable");
}

const json& table1_row(const json& report, const std::string& producer, const std::string& level) {
  for (const auto& row : report["table1"]["compatible"]["rows"])
    if (row["system"] == producer && row["level"] == level) return row;
  FAIL("no table1 row " << producer << " " << level);
  throw std::logic_error("unreachable");
}

} // namespace

TEST_CASE("kj report: leaderboard and Table 1 equal numbers recomputed from the fixture's design") {
  scratch_dir dir;
  build_report_db(dir / "kj.sqlite");
  const auto r = run_kj({"report", "--db", (dir / "kj.sqlite").string(), "-o", (dir / "out").string()});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("report of 15 evaluations") != std::string::npos);
  const json report = json::parse(read_file(dir / "out" / "report.json"));
  CHECK(report["format_version"] == 1);
  CHECK(report["db"].get<std::string>().find("kj.sqlite") != std::string::npos);

  for (const std::string producer : {"agent", "claude"})
    for (int level : {0, 1, 2}) {
      const json& row = board_row(report, producer, level == 0 ? json("all") : json(level));
      INFO(producer << " level " << level);
      const auto eager = expect(producer, level, "eager", true);
      CHECK(row["evaluations"] == eager.n);
      CHECK(row["pass_compatible"]["value"].get<double>() == Approx(eager.pass / eager.n));
      CHECK(row["pass_strict"]["value"].get<double>() == Approx(eager.strict_pass / eager.n));
      for (const std::string baseline : {"eager", "compile-default", "best"}) {
        INFO(baseline);
        const auto e = expect(producer, level, baseline, true);
        const json& column = row["baselines"][baseline];
        CHECK(column["with_speedup"] == e.correct_speedups.size());
        CHECK(column["faster"]["value"].get<double>() == Approx(e.faster / e.n));
        if (e.correct_speedups.empty()) {
          CHECK(column["geomean_correct"].is_null());
          continue;
        }
        CHECK(column["geomean_correct"].get<double>() == Approx(e.geomean_correct()));
        CHECK(column["geomean_all"].get<double>() == Approx(e.geomean_all()));
        // fast_p at p = 1.0 (grid step 0.05) is the faster-than rate; at p = 0 every counted speedup.
        CHECK(column["fast_p"][20].get<double>() == Approx(e.faster / e.n));
        CHECK(column["fast_p"][0].get<double>() == Approx(e.correct_speedups.size() / e.n));
      }
      CHECK(row["baselines"]["eager"]["faster_noise_aware"]["value"].get<double>() ==
            Approx(eager.noise_aware / eager.n));
      CHECK(row["crashes"] == (producer == "agent" && level != 1 ? 1 : 0));
      CHECK(row["timeouts"] == (producer == "claude" && level != 2 ? 1 : 0));
      CHECK(row["tokens_per_solved"].is_null()); // no token data in this DB
      const std::string provenance = row["provenance"];
      CHECK(provenance.find("robust/host") != std::string::npos);
      CHECK(provenance.find("fixture-stack") != std::string::npos);
      CHECK(provenance.find("fp32") != std::string::npos);
    }

  // Table 1 uses the compatible verdict, as the paper does: agent's strict failure (4x) counts there.
  for (const std::string producer : {"agent", "claude"})
    for (int level : {0, 1, 2}) {
      const json& row = table1_row(report, producer, level == 0 ? "overall" : "L" + std::to_string(level));
      INFO(producer << " level " << level);
      const auto eager = expect(producer, level, "eager", false);
      const auto compile = expect(producer, level, "compile-default", false);
      CHECK(row["pass_rate"]["value"].get<double>() == Approx(eager.pass / eager.n));
      CHECK(row["faster_than_eager"]["value"].get<double>() == Approx(eager.faster / eager.n));
      bool any_compile = false; // no compile baseline at all in the group: the column is undefined
      for (const auto& d : design())
        any_compile =
            any_compile || (d.producer == producer && (level == 0 || d.level == level) && d.compile_ms);
      if (any_compile)
        CHECK(row["faster_than_compile"]["value"].get<double>() == Approx(compile.faster / compile.n));
      else
        CHECK(row["faster_than_compile"]["value"].is_null());
      CHECK(row["geomean_vs_eager"]["value"].get<double>() == Approx(eager.geomean_correct()));
      CHECK(row["geomean_vs_eager_failures_as_1"]["value"].get<double>() == Approx(eager.geomean_all()));
      const auto ci = row["pass_rate"]["ci"];
      REQUIRE(ci.is_array());
      CHECK(ci[0].get<double>() <= eager.pass / eager.n + 1e-12);
      CHECK(ci[1].get<double>() >= eager.pass / eager.n - 1e-12);
    }
  // The published rows come from the data file, untouched.
  const auto& published = report["table1"]["published"]["rows"];
  REQUIRE(published.size() >= 3);
  CHECK(published[0]["system"] == "CUDA Agent");
  CHECK(published[0]["faster_than_compile"].get<double>() == Approx(0.968));

  // The page's leaderboard has the not-judged column the JSON and CSV carry (none here: kj failed nowhere).
  const std::string page = read_file(dir / "out" / "index.html");
  CHECK(page.find("not<br>judged</th>") != std::string::npos);
  CHECK(page.find("count nowhere") != std::string::npos);

  // The CSV carries the same numbers as the JSON.
  const std::string csv = read_file(dir / "out" / "leaderboard.csv");
  const auto all = expect("agent", 0, "eager", true);
  std::istringstream lines(csv);
  std::string line, header;
  std::getline(lines, header);
  bool found = false;
  while (std::getline(lines, line))
    if (line.rfind("agent,all,", 0) == 0) {
      found = true;
      CHECK(line.find(fmt::format(",{},", all.pass / all.n)) != std::string::npos);
    }
  CHECK(found);
}

TEST_CASE("kj results JSON and CSV carry a format version and, per timing, the sample count and interval") {
  scratch_dir dir;
  build_report_db(dir / "kj.sqlite");
  const auto r = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const json rows = json::parse(r.out);
  REQUIRE(rows.size() == 15);
  std::size_t timed = 0;
  for (const auto& row : rows) {
    CHECK(row["format_version"] == 6);
    CHECK(row["stack"] == "fixture-stack");
    CHECK(row["dtype"] == "fp32");
    if (!row["candidate_median_ms"].is_number()) continue;
    ++timed;
    const double median = row["candidate_median_ms"];
    CHECK(row["candidate_samples"] == 41);
    CHECK(row["timings"]["candidate"]["samples"] == 41);
    CHECK(row["timings"]["candidate"]["statistic"] == "median");
    CHECK(row["candidate_ci_ms"][0].get<double>() < median);
    CHECK(row["candidate_ci_ms"][1].get<double>() > median);
    CHECK(row["speedup_ci"][0].get<double>() < row["speedup"].get<double>());
    CHECK(row["speedup_ci"][1].get<double>() > row["speedup"].get<double>());
  }
  CHECK(timed == 10);
  const auto csv = run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--format", "csv"});
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find("candidate_samples,candidate_ci_low_ms,candidate_ci_high_ms") != std::string::npos);
  CHECK(csv.out.find(",format_version\n") != std::string::npos);
}
