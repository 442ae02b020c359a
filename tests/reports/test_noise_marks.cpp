// Speedups that may be noise are marked where they are printed (issue 34): the interval includes 1, or the
// host's speed moved while the candidate was timed; and colliding producer labels are told apart by their
// folders.
#include "reports/metrics.hpp"
#include "reports/producer_labels.hpp"
#include "reports/results_table.hpp"
#include "tests/support/catch_compat.hpp"

#include <nlohmann/json.hpp>
#include <sstream>

using kj::reports::result_row;
using nlohmann::json;

namespace {

result_row timed(double speedup, double low, double high) {
  result_row r;
  r.level = 1;
  r.number = 2;
  r.problem_name = "GELU";
  r.verdict = kj::verdict::correct;
  r.candidate_median_ms = 1.0;
  r.reference_median_ms = speedup;
  r.speedup = speedup;
  r.speedup_ci = {low, high};
  return r;
}

} // namespace

TEST_CASE("a speedup whose interval includes 1, or whose host moved, is marked and explained") {
  result_row clear = timed(1.5, 1.4, 1.6), straddles = timed(1.02, 0.97, 1.08), moved = timed(1.5, 1.4, 1.6);
  CHECK(kj::reports::noise_of(clear, json::object()).empty());
  straddles.noise = kj::reports::noise_of(straddles, json::object());
  CHECK(straddles.noise == "its 95% interval [0.970, 1.080] includes 1");
  moved.noise = kj::reports::noise_of(moved, json{{"host_change_pair", 0.07}});
  CHECK(moved.noise == "the host's speed moved by 7% while it was timed");
  CHECK(kj::reports::noise_of(timed(1.5, 1.4, 1.6), json{{"host_change_pair", 0.04}}).empty());
  // kj's input draw charged to the candidate's calls (slower in its process than in the judge): named.
  const json charged{{"judge_clock", {{"draw_charge_ms", 0.042}}}};
  CHECK(kj::reports::noise_of(timed(1.5, 1.4, 1.6), charged).find("0.042 ms a call charged") !=
        std::string::npos);
  // Calls the judge's handshake charged (a host that delayed their replies), other processes on the GPU,
  // throttled clocks: each named.
  const json handshake{
      {"handshake",
       {{{"runner_samples_ms", {1.0, 1.0, 1.0, 1.0}}, {"charged_calls", 1}, {"total_charge_ms", 0.2}},
        {{"runner_samples_ms", {1.0, 1.0, 1.0, 1.0}}, {"charged_calls", 0}, {"total_charge_ms", 0}}}}};
  CHECK(
      kj::reports::noise_of(timed(1.5, 1.4, 1.6), handshake) ==
      "1 of 8 calls charged 0.025 ms on average: the judge's clock around them saw more than the candidate's "
      "timer");
  CHECK(
      kj::reports::noise_of(timed(1.5, 1.4, 1.6), json{{"co_tenants", 2}, {"throttled", true}}) ==
      "2 other process(es) used the GPU while it was timed; the GPU's clocks were slowed (NVML) while it was "
      "timed");
  // One robust round (--quick): an identity candidate measured 5.55x with an interval of [2.90, 6.08] on a
  // loaded 2-core host; one round cannot tell such a drift from a speedup, and says so.
  CHECK(kj::reports::noise_of(timed(5.55, 2.90, 6.08), json{{"method", "robust"}, {"rounds", 1}})
            .find("one timing round") == 0);
  CHECK(kj::reports::noise_of(timed(5.55, 2.90, 6.08), json{{"method", "robust"}, {"rounds", 3}}).empty());
  // KernelBench's method times each side once (a reviewer's identity at 1.275x, [1.156, 1.412], unmarked).
  CHECK(kj::reports::noise_of(timed(1.275, 1.156, 1.412), json{{"method", "kernelbench"}, {"rounds", 3}})
            .find("one timing round") == 0);
  // Most calls charged by the judge's clock (a forging timer or a host that delayed every handshake): the
  // charged time is credited, the row marked and kept out of the noise-aware "faster".
  result_row doubted = timed(1.5, 1.4, 1.6);
  doubted.noise = kj::reports::noise_of(doubted, json{{"clock_doubt", "the judge's clock charged 40 of 40"}});
  CHECK(doubted.noise.find("most calls charged by the judge's clock: the judge's clock charged 40 of 40") ==
        0);
  CHECK(kj::reports::timing_doubtful(doubted));
  // Most calls charged in rounds the judge did not call systematic (a reviewer's identity at 0.859x, 376 of
  // 407 calls charged, unmarked): marked all the same.
  const json most{
      {"handshake",
       {{{"runner_samples_ms", {1.0, 1.0, 1.0, 1.0}}, {"charged_calls", 3}, {"total_charge_ms", 0.9}},
        {{"runner_samples_ms", {1.0, 1.0, 1.0, 1.0}}, {"charged_calls", 2}, {"total_charge_ms", 0.4}}}}};
  result_row mostly = timed(0.859, 0.785, 0.937);
  mostly.noise = kj::reports::noise_of(mostly, most);
  CHECK(mostly.noise.find("most calls charged by the judge's clock: 5 of 8") != std::string::npos);
  CHECK(kj::reports::may_be_noise(mostly));
  CHECK_FALSE(kj::reports::timing_doubtful(clear));
  result_row no_speedup;
  CHECK(kj::reports::noise_of(no_speedup, json{{"host_change_pair", 0.5}}).empty());

  std::ostringstream table;
  kj::reports::write_results({clear, straddles, moved}, "table", table);
  CHECK(table.str().find("1.500x ") != std::string::npos);
  CHECK(table.str().find("1.020x~") != std::string::npos);
  CHECK(table.str().find("1.500x~") != std::string::npos);
  CHECK(table.str().find("~ marks a speedup that may be noise") != std::string::npos);
  std::ostringstream quiet;
  kj::reports::write_results({clear}, "table", quiet);
  CHECK(quiet.str().find("~") == std::string::npos);

  std::ostringstream out;
  kj::reports::write_results({clear, straddles}, "json", out);
  const json rows = json::parse(out.str());
  CHECK(rows[0]["speedup_noisy"] == false);
  CHECK(rows[1]["speedup_noisy"] == true);
  CHECK(rows[1]["speedup_noise"] == straddles.noise);
  // The CSV carries the mark too (a reviewer read an identity candidate's 28.06 there as significant).
  std::ostringstream csv;
  kj::reports::write_results({clear, straddles}, "csv", csv);
  std::istringstream lines(csv.str());
  std::string header, first, second;
  std::getline(lines, header), std::getline(lines, first), std::getline(lines, second);
  CHECK(header.find(",speedup_noisy,speedup_noise,sizes,format_version") != std::string::npos);
  CHECK(first.find(",false,,,6") != std::string::npos);
  CHECK(second.find(",true,") != std::string::npos);

  // A few charged calls are named, never a mark: the table, the JSON and the report agree (a reviewer saw
  // `speedup_noisy: true` beside an unmarked 0.679x).
  result_row few = timed(1.5, 1.4, 1.6);
  few.noise = kj::reports::noise_of(few, handshake);
  CHECK_FALSE(kj::reports::may_be_noise(few));
  std::ostringstream both;
  kj::reports::write_results({few, moved}, "json", both);
  const json marked = json::parse(both.str());
  CHECK(marked[0]["speedup_noisy"] == false);
  CHECK(marked[0]["speedup_noise"] == few.noise);
  CHECK(marked[1]["speedup_noisy"] == true);
  std::ostringstream few_table;
  kj::reports::write_results({few}, "table", few_table);
  CHECK(few_table.str().find("1.500x~") == std::string::npos);
}

TEST_CASE(
    "timing rounds whose speedups fall on both sides of 1 mark the speedup, whatever its pooled interval") {
  // Samples within a round share the host's state of that moment, so the interval of all samples pooled can
  // exclude 1 for an identity candidate on a host that drifted (a reviewer saw 1.132x [1.087, 1.174],
  // unmarked, on a loaded 2-core machine). The rounds are repeated measurements: when they disagree, it is
  // noise.
  const auto row = [](std::vector<double> samples, const json& params) {
    kj::db::timing_row t;
    t.samples_ms = std::move(samples);
    t.params_json = params.dump();
    return t;
  };
  const json three{{"round_samples", {2, 2, 2}}};
  const auto candidate = row({1.0, 1.0, 1.0, 1.0, 1.0, 1.0}, three);
  // Reference rounds 1.2, 0.9, 1.3: per-round speedups 0.9 to 1.3.
  const auto drifted = row({1.2, 1.2, 0.9, 0.9, 1.3, 1.3}, three);
  const std::string note = kj::reports::rounds_disagree(candidate, drifted);
  CHECK(note == "its timing rounds disagree: the speedups of its 3 rounds run from 0.900 to 1.300");
  result_row r = timed(1.2, 1.1, 1.3);
  r.noise = note;
  CHECK(kj::reports::timing_doubtful(r));
  CHECK(kj::reports::may_be_noise(r));
  // Every round faster: no mark from the rounds.
  CHECK(kj::reports::rounds_disagree(candidate, row({1.2, 1.2, 1.1, 1.1, 1.3, 1.3}, three)).empty());
  // Rounds not known (one round, an older row, counts that do not add up): nothing is claimed.
  CHECK(
      kj::reports::rounds_disagree(row({1.0, 1.0}, json::object()), row({1.2, 0.9}, json::object())).empty());
  CHECK(kj::reports::rounds_disagree(candidate, row({1.2, 0.9, 1.3}, three)).empty());
}

TEST_CASE("producer labels that name two folders are told apart by the shortest distinguishing path part") {
  CHECK(kj::reports::distinguishing_suffixes({"/x/v1/claude", "/x/v2/claude"}) ==
        std::vector<std::string>{"v1/claude", "v2/claude"});
  CHECK(kj::reports::distinguishing_suffixes({"/a/claude", "/b/gemini"}) ==
        std::vector<std::string>{"claude", "gemini"});
  CHECK(kj::reports::distinguishing_suffixes({"claude", "/runs/claude"}) ==
        std::vector<std::string>{"claude", "runs/claude"});

  std::vector<kj::db::run_row> runs(3);
  runs[0].run_uid = "r1";
  runs[0].config_json = R"({"candidates": "/x/v1/claude"})";
  runs[1].run_uid = "r2";
  runs[1].config_json = R"({"candidates": "/x/v2/claude"})";
  runs[2].run_uid = "r3"; // a rerun of r1's folder: the same producer, newest wins later
  runs[2].config_json = R"({"candidates": "/x/v1/claude"})";
  std::vector<result_row> rows(3);
  for (std::size_t i = 0; i < 3; ++i) {
    rows[i].run_uid = runs[i].run_uid;
    rows[i].producer = "claude";
  }
  const auto warnings = kj::reports::separate_colliding_producers(rows, runs);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("producer label 'claude' names 2 candidate folders") != std::string::npos);
  CHECK(rows[0].producer == "v1/claude");
  CHECK(rows[1].producer == "v2/claude");
  CHECK(rows[2].producer == "v1/claude");
  std::vector<result_row> one_folder(2);
  one_folder[0].run_uid = "r1";
  one_folder[1].run_uid = "r3";
  one_folder[0].producer = one_folder[1].producer = "claude";
  CHECK(kj::reports::separate_colliding_producers(one_folder, runs).empty());
  CHECK(one_folder[0].producer == "claude");
}

TEST_CASE("a host-bound speedup is marked h, said in JSON and explained, and a device-bound one is not") {
  result_row host = timed(0.795, 0.79, 0.80), device = timed(0.995, 0.99, 1.0), cpu = timed(0.8, 0.79, 0.81);
  host.gpu_busy_share = 0.24; // EfficientNetB0's identity on an H100: the window mostly the host launching
  device.gpu_busy_share = 0.97;
  CHECK(kj::reports::host_bound(host));
  CHECK_FALSE(kj::reports::host_bound(device));
  CHECK_FALSE(kj::reports::host_bound(cpu)); // no kernel trace on the CPU: nothing to say
  std::ostringstream table, js, md;
  kj::reports::write_results({host, device}, "wide", table);
  CHECK(table.str().find("0.795xh") != std::string::npos);
  CHECK(table.str().find("0.995xh") == std::string::npos);
  CHECK(table.str().find("h marks a host-bound speedup") != std::string::npos);
  kj::reports::write_results({host, device}, "json", js);
  const json rows = json::parse(js.str());
  CHECK(rows[0]["speedup_host_bound"] == true);
  CHECK(rows[1]["speedup_host_bound"] == false);
  kj::reports::write_results({host}, "markdown", md);
  CHECK(md.str().find("0.80x h") != std::string::npos);
  CHECK(md.str().find("host-bound: the GPU busy 24%") != std::string::npos);
}
