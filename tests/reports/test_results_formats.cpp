// kj results' formats are one table (reports/results_writers.cpp): every name there writes, an unknown name
// is refused with the names there are, and the Markdown table keeps one row per evaluation whatever its texts
// hold.
#include "reports/results_table.hpp"
#include "tests/support/catch_compat.hpp"

#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

using kj::reports::result_row;

namespace {

std::vector<result_row> two_rows() {
  result_row fast;
  fast.level = 1;
  fast.number = 19;
  fast.problem_name = "ReLU";
  fast.producer = "claude";
  fast.verdict = kj::verdict::correct;
  fast.strict_verdict = kj::strict_verdict::pass;
  fast.candidate_median_ms = 0.5;
  fast.reference_median_ms = 1.0;
  fast.speedup = 2.0;
  result_row broken = fast;
  broken.number = 20;
  broken.verdict = kj::verdict::runtime_error;
  broken.strict_verdict = kj::strict_verdict::none;
  broken.speedup.reset();
  broken.candidate_median_ms.reset();
  broken.error = "shape mismatch | got [2, 3]\nTraceback (most recent call last):";
  return {fast, broken};
}

std::string written(const std::string& format) {
  std::ostringstream out;
  kj::reports::write_results(two_rows(), format, out);
  return out.str();
}

} // namespace

TEST_CASE("every format in the table writes the rows, and an unknown one is refused by name") {
  for (const auto& w : kj::reports::results_writers()) {
    INFO(w.name);
    CHECK_FALSE(written(std::string(w.name)).empty());
    CHECK(&kj::reports::results_writer_named(std::string(w.name)) == &w);
  }
  std::string message;
  try {
    kj::reports::results_writer_named("yaml");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("unknown format 'yaml'") != std::string::npos);
  CHECK(message.find("markdown") != std::string::npos);
  CHECK(kj::reports::results_writer_named("csv").for_scripts);
  CHECK_FALSE(kj::reports::results_writer_named("markdown").for_scripts);
}

TEST_CASE("the Markdown table has a header, a rule and one row per evaluation, pipes escaped") {
  const std::string md = written("markdown");
  std::istringstream lines(md);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);)
    rows.push_back(line);
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].starts_with("| L | id | problem |"));
  CHECK(rows[1].starts_with("|--:|"));
  CHECK(rows[2] == "| 1 | 19 | ReLU | claude | 0 | correct | pass | 0.5000 | 1.0000 | 2.00x |  |");
  // The error's pipe is escaped and only its first line is kept: the row still has its 11 cells.
  CHECK(rows[3].find("shape mismatch \\| got [2, 3] |") != std::string::npos);
  CHECK(rows[3].find("Traceback") == std::string::npos);
}

TEST_CASE("rows carry the verdicts typed from the DB to the result") {
  kj::db::evaluation_row e;
  e.evaluation_id = 7;
  e.verdict = kj::verdict::correct;
  e.strict_verdict = kj::strict_verdict::pass;
  const result_row r = kj::reports::derive(e, {});
  CHECK(r.verdict == kj::verdict::correct);
  CHECK(r.strict_verdict == kj::strict_verdict::pass);
  CHECK(r.counted_correct());
  e.strict_verdict = kj::strict_verdict::fail;
  CHECK_FALSE(kj::reports::derive(e, {}).counted_correct());
}

TEST_CASE("a candidate without a file and the --set sizes are named in every format (review 10)") {
  auto rows = two_rows();
  rows[0].producer = "identity"; // builtin:identity: no file
  rows[1].candidate_path = "cands/level_1_problem_20_sample_0_kernel.py";
  rows[1].sizes = R"({"batch_size":4,"dim":16})";
  std::ostringstream json_out;
  kj::reports::write_results(rows, "json", json_out);
  const auto json_rows = nlohmann::json::parse(json_out.str());
  CHECK(json_rows[0]["candidate"] == "(identity)");
  CHECK(json_rows[0]["sizes"].is_null());
  CHECK(json_rows[1]["candidate"] == rows[1].candidate_path);
  CHECK(json_rows[1]["sizes"] == nlohmann::json{{"batch_size", 4}, {"dim", 16}});
  std::ostringstream csv, table, verbose;
  kj::reports::write_results(rows, "csv", csv);
  kj::reports::write_results(rows, "table", table);
  kj::reports::write_results(rows, "verbose", verbose);
  CHECK(csv.str().find(",(identity),identity,") != std::string::npos);
  CHECK(csv.str().find(",batch_size=4 dim=16,6") != std::string::npos);
  CHECK(table.str().find("at batch_size=4 dim=16; shape mismatch") != std::string::npos);
  CHECK(verbose.str().find("sizes batch_size=4 dim=16 (--set)") != std::string::npos);
}
