// Issue 16's acceptance on the CPU: `kj agent --adapter openai --model test-model --level 1 --ids 1-3`
// against the scripted model. L1 2: profile, a compile error, the fix, strict fails on NaN inputs, the fix,
// profile, submit; L1 1: escapes from the sandbox refused, then a kernel verified and submitted; L1 3:
// written, verified, profiled, submitted. Transcripts, selection, the re-measurement, `kj results`, `kj show`
// and `kj costs`.
#include "agent_test_support.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

using namespace kj;
using namespace kj::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const db::tool_call_record& nth_call(const db::trajectory_transcript& t, const std::string& tool, int n) {
  for (const auto& calls : t.calls)
    for (const auto& c : calls)
      if (c.tool == tool && n-- == 0) return c;
  FAIL("no call " << n << " of " << tool);
  throw std::logic_error("unreachable");
}

// The scenario of L1 2_GELU, call by call.
void check_gelu(const db::store& store, const db::trajectory_transcript& t) {
  CHECK(tools_called(t) == std::vector<std::string>{"profile", "write_file", "write_file", "write_file",
                                                    "compile", "edit_file", "compile", "verify", "edit_file",
                                                    "verify", "profile", "submit"});
  CHECK(t.trajectory.status == "submitted");
  CHECK(t.trajectory.turns == 10);
  const auto& broken = nth_call(t, "compile", 0);
  CHECK(broken.is_error);
  CHECK(broken.summary.find("compile_error") != std::string::npos);
  CHECK(broken.result.find("error") != std::string::npos);
  CHECK_FALSE(nth_call(t, "compile", 1).is_error);
  // Strict fails on NaN inputs (the clamp), while the compatible verdict passes: KernelBench would accept it.
  const auto clamped = store.get_evaluation(nth_call(t, "verify", 0).evaluation_id);
  REQUIRE(clamped);
  CHECK(clamped->verdict == kj::verdict::correct);
  CHECK(clamped->strict_verdict == kj::strict_verdict::fail);
  CHECK(clamped->strict_failed.find("nan") != std::string::npos);
  CHECK(nth_call(t, "verify", 0).result.find("expected nan") != std::string::npos); // the first mismatch
  const auto fixed = store.get_evaluation(nth_call(t, "verify", 1).evaluation_id);
  REQUIRE(fixed);
  CHECK((fixed->verdict == kj::verdict::correct && fixed->strict_verdict == kj::strict_verdict::pass));
  // Selected: the profiled, strictly correct version (also the final one); its fresh re-measurement is the
  // trajectory's result, a different evaluation of the same candidate.
  const auto& profiled = nth_call(t, "profile", 1);
  CHECK(t.trajectory.selected_evaluation_id == profiled.evaluation_id);
  CHECK(t.trajectory.selected_candidate_id == profiled.candidate_id);
  CHECK(t.trajectory.final_candidate_id == profiled.candidate_id);
  REQUIRE(t.trajectory.result_evaluation_id != 0);
  CHECK(t.trajectory.result_evaluation_id != t.trajectory.selected_evaluation_id);
  const auto result = store.get_evaluation(t.trajectory.result_evaluation_id);
  REQUIRE(result);
  CHECK(result->candidate_id == t.trajectory.selected_candidate_id);
  CHECK((result->verdict == kj::verdict::correct && result->strict_verdict == kj::strict_verdict::pass));
  REQUIRE(t.trajectory.inloop_speedup);
  REQUIRE(t.trajectory.remeasured_speedup);
  CHECK(*t.trajectory.inflation() == Approx(*t.trajectory.inloop_speedup / *t.trajectory.remeasured_speedup));
  CHECK(t.trajectory.speedup_baseline == "eager"); // nothing compiled is cached for this stack
  // The reference's profile before model_new.py existed: times and the speed of light, no evaluation row.
  const auto& reference = nth_call(t, "profile", 0);
  CHECK(reference.summary.starts_with("profile of the reference"));
  CHECK(reference.result.find("memory bound") != std::string::npos);
}

// L1 1: every escape refused, nothing written outside, then verified (not profiled) and submitted.
void check_matmul(const db::store& store, const db::trajectory_transcript& t) {
  REQUIRE(t.calls.size() >= 2);
  REQUIRE(t.calls[0].size() == 5);
  for (const auto& c : t.calls[0]) {
    INFO(c.tool << " " << c.arguments_json << ": " << c.result);
    CHECK(c.is_error);
    CHECK(c.result.find("refused") != std::string::npos);
    CHECK(c.result == c.summary); // one line: nothing of the files it aimed at came back
    CHECK(c.result.find("PATH=") == std::string::npos);
  }
  const fs::path ws = t.trajectory.workspace;
  CHECK_FALSE(fs::exists(ws.parent_path() / "outside.py"));
  CHECK(read_file(ws / "model.py").find("torch.matmul") != std::string::npos); // the reference, unchanged
  CHECK(t.trajectory.status == "submitted");
  CHECK(t.trajectory.selected_candidate_id != 0);
  CHECK_FALSE(t.trajectory.inloop_speedup); // verified, never profiled: no in-loop speed to inflate
  REQUIRE(t.trajectory.result_evaluation_id != 0);
  CHECK(store.get_evaluation(t.trajectory.result_evaluation_id)->strict_verdict == kj::strict_verdict::pass);
}

} // namespace

TEST_CASE("kj agent --adapter openai runs the scripted model on L1 1-3 end to end") {
  fake_llm_server server(fixtures_dir() / "llm", {}, agent_fixtures());
  scratch_dir dir;
  const auto run =
      run_kj(agent_args(server, dir, "openai", "test-model",
                        {"--ids", "1-3", "--run-id", "acc", "--trials", "4", "--input-rng", "host"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("in-loop") != std::string::npos);  // the trajectory table
  CHECK(run.out.find("$/solved") != std::string::npos); // the cost table

  const db::store store = db::store::open_read_only(dir / "kj.sqlite");
  // kj agent takes kj run's judging flags (one definition) and records them with the run.
  const auto config = nlohmann::json::parse(store.get_run(*store.find_run("acc"))->config_json);
  CHECK(config.at("trials") == 4);
  CHECK(config.at("input_rng") == "host");
  CHECK(config.at("strict") == true);
  CHECK(config.at("limits").is_object());
  const auto trajectories = store.trajectories("acc");
  REQUIRE(trajectories.size() == 3);
  std::map<int, db::trajectory_transcript> by_problem;
  for (const auto& t : trajectories) {
    auto transcript = store.get_transcript(t.id);
    REQUIRE(transcript);
    require_script_followed(*transcript);
    CHECK(t.producer == "agent/openai/test-model");
    CHECK((t.cost_usd && *t.cost_usd > 0));
    CHECK(t.input_tokens > 0);
    by_problem.emplace(store.get_problem(t.problem_id)->number, std::move(*transcript));
  }
  check_matmul(store, by_problem.at(1));
  check_gelu(store, by_problem.at(2));
  CHECK(by_problem.at(3).trajectory.status == "submitted");
  CHECK(by_problem.at(3).trajectory.remeasured_speedup);

  // kj results: one row per trajectory (its re-measurement), not the in-loop evaluations.
  const auto results =
      run_kj({"results", "--db", (dir / "kj.sqlite").string(), "--run", "acc", "--format", "json"});
  REQUIRE(results.exit_code == 0);
  const json rows = json::parse(results.out);
  REQUIRE(rows.size() == 3);
  std::vector<std::int64_t> reported;
  for (const auto& t : trajectories)
    reported.push_back(t.result_evaluation_id);
  for (const json& row : rows) {
    CHECK(row["verdict"] == "correct");
    CHECK(std::find(reported.begin(), reported.end(), row["evaluation_id"].get<std::int64_t>()) !=
          reported.end());
  }

  // kj show: the transcript, an in-loop evaluation, the run's trajectories.
  const std::string db = (dir / "kj.sqlite").string();
  const auto& gelu = by_problem.at(2).trajectory;
  const auto shown = run_kj({"show", "trajectory", std::to_string(gelu.id), "--db", db});
  REQUIRE(shown.exit_code == 0);
  for (const char* part : {"status: submitted", "compile_error", "strict fail", "> edit_file",
                           "selection inflated", "--- turn 10", "result: evaluation"})
    CHECK(shown.out.find(part) != std::string::npos);
  const auto evaluation =
      run_kj({"show", "evaluation", std::to_string(gelu.selected_evaluation_id), "--db", db, "--source"});
  REQUIRE(evaluation.exit_code == 0);
  CHECK(evaluation.out.find("made in an agent's loop by `profile`") != std::string::npos);
  CHECK(evaluation.out.find("_KJ_WORKDIR_FILES") != std::string::npos); // the workspace as one source
  const auto listed = run_kj({"show", "trajectories", "--db", db, "--run", "acc"});
  REQUIRE(listed.exit_code == 0);
  CHECK(std::count(listed.out.begin(), listed.out.end(), '\n') == 5); // header, 3 rows, the note

  // kj report: the result's page carries the trajectory behind it.
  const auto report =
      run_kj({"report", "--db", db, "--run", "acc", "-o", (dir / "report").string(), "--replicates", "100"});
  INFO(report.err);
  REQUIRE(report.exit_code == 0);
  const std::string page =
      read_file(dir / "report" / "e" / (std::to_string(gelu.result_evaluation_id) + ".html"));
  for (const char* part : {"Agent trajectory", "<h3>turn 10</h3>", "compile_error", "selection inflated it"})
    CHECK(page.find(part) != std::string::npos);

  const auto costs = run_kj({"costs", "--db", db, "--run", "acc", "--format", "json"});
  REQUIRE(costs.exit_code == 0);
  const json cost = json::parse(costs.out)["models"];
  REQUIRE(cost.size() == 1);
  CHECK(cost[0]["calls"] == 10 + 3 + 4);
  CHECK(cost[0]["cost_usd"].get<double>() > 0);
  CHECK(cost[0]["solved_strict"] == 3); // counted from the re-measurements
  // What went over the wire: our eight tools, and each tool result as an OpenAI role "tool" message.
  const auto requests = server.requests();
  REQUIRE(requests.size() == 17);
  const json last = json::parse(requests.back().body);
  CHECK(last["tools"].size() == 8);
  CHECK(std::any_of(last["messages"].begin(), last["messages"].end(),
                    [](const json& m) { return m.value("role", "") == "tool"; }));
}
