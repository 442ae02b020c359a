// kj merge's copy plan: the tables in the order their ids are mapped, and the check that it maps every
// foreign key of the schema.
#include "db/merge_plan.hpp"

#include "db/store.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <string>

namespace kj::db::merge_detail {

using sqlite::connection;

const std::vector<table_copy>& copy_plan() {
  static const std::vector<table_copy> plan{
      {"stacks", {}, "d.stack_hash = x.stack_hash"},
      {"problems",
       {},
       "d.suite = x.suite AND d.kb_version = x.kb_version AND d.level = x.level AND d.file_name = "
       "x.file_name "
       "AND d.source_hash = x.source_hash"},
      {"candidates",
       {{"problem_id", "problems"}},
       "d.problem_id = x.problem_id AND d.producer = x.producer AND d.sample = x.sample AND "
       "d.source_hash = x.source_hash"},
      {"runs", {{"stack_id", "stacks"}}, "d.run_uid = x.run_uid"},
      {"llm_exchanges",
       {{"run_id", "runs"}},
       "d.run_id = x.run_id AND d.request_hash = x.request_hash AND d.seq = x.seq AND "
       "d.started_at = x.started_at"},
      {"llm_generations", {{"run_id", "runs"}, {"replayed_from", "runs"}}, "d.run_id = x.run_id", "1", false},
      {"llm_batches", {{"run_id", "runs"}}, "d.run_id = x.run_id AND d.batch_id = x.batch_id"},
      {"candidate_origins",
       {{"candidate_id", "candidates"}, {"run_id", "runs"}, {"exchange_id", "llm_exchanges"}},
       "d.candidate_id = x.candidate_id AND d.run_id = x.run_id"},
      {"builds",
       {{"candidate_id", "candidates"}},
       "d.candidate_id = x.candidate_id AND d.build_key = x.build_key"},
      // Imported rows are keyed by their cache key alone (the importer skips a key it holds); measured ones
      // by key and time: a re-measurement is a row of its own.
      {"baselines",
       {{"problem_id", "problems"}, {"stack_id", "stacks"}},
       "d.cache_key = x.cache_key AND d.origin = x.origin AND (x.origin = 'imported' OR "
       "d.created_at = x.created_at)"},
      {"baseline_samples",
       {{"baseline_id", "baselines"}},
       "d.baseline_id = x.baseline_id AND d.sample_index = x.sample_index",
       "s.baseline_id IN (SELECT src FROM temp.new_baselines)",
       false},
      // An audit by its problem, device and time: auditing again is a row of its own.
      {"problem_audits",
       {{"problem_id", "problems"}, {"stack_id", "stacks"}},
       "d.problem_id = x.problem_id AND d.device = x.device AND d.created_at = x.created_at"},
      {"evaluations",
       {{"run_id", "runs"},
        {"problem_id", "problems"},
        {"candidate_id", "candidates"},
        {"stack_id", "stacks"}},
       // A result once per (run, candidate); the built-in agent's in-loop evaluations by when they started.
       "d.run_id = x.run_id AND d.candidate_id = x.candidate_id AND d.purpose = x.purpose AND "
       "(x.purpose = 'result' OR d.started_at = x.started_at)"},
      {"trials",
       {{"evaluation_id", "evaluations"}},
       "d.evaluation_id = x.evaluation_id AND d.trial_index = x.trial_index",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)"},
      {"timings",
       {{"evaluation_id", "evaluations"}},
       "d.evaluation_id = x.evaluation_id AND d.subject = x.subject AND d.method = x.method AND "
       "d.clock = x.clock",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)"},
      {"timing_samples",
       {{"timing_id", "timings"}},
       "d.timing_id = x.timing_id AND d.sample_index = x.sample_index",
       "s.timing_id IN (SELECT src FROM temp.new_timings)",
       false},
      {"verification_cases",
       {{"evaluation_id", "evaluations"}},
       "d.evaluation_id = x.evaluation_id AND d.case_class = x.case_class AND d.case_index = x.case_index",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)"},
      {"static_findings",
       {{"evaluation_id", "evaluations"}},
       nullptr,
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)"},
      {"evaluation_memory",
       {{"evaluation_id", "evaluations"}},
       "d.evaluation_id = x.evaluation_id",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)",
       false},
      {"evaluation_phases",
       {{"evaluation_id", "evaluations"}},
       "d.evaluation_id = x.evaluation_id AND d.phase = x.phase",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)",
       false},
      {"evaluation_baselines",
       {{"evaluation_id", "evaluations"}, {"baseline_id", "baselines"}},
       "d.evaluation_id = x.evaluation_id AND d.baseline_id = x.baseline_id",
       "s.evaluation_id IN (SELECT src FROM temp.new_evaluations)",
       false},
      // The built-in agent: a trajectory by its attempt and start (a restarted attempt is a row of its own),
      // its turns and tool calls by position, so that a trajectory merged while it ran gains its later turns.
      {"agent_trajectories",
       {{"run_id", "runs"},
        {"problem_id", "problems"},
        {"selected_candidate_id", "candidates"},
        {"selected_evaluation_id", "evaluations"},
        {"final_candidate_id", "candidates"},
        {"final_evaluation_id", "evaluations"},
        {"result_evaluation_id", "evaluations"}},
       "d.run_id = x.run_id AND d.problem_id = x.problem_id AND d.attempt = x.attempt AND "
       "d.started_at = x.started_at"},
      {"agent_turns",
       {{"trajectory_id", "agent_trajectories"}, {"exchange_id", "llm_exchanges"}},
       "d.trajectory_id = x.trajectory_id AND d.turn = x.turn"},
      {"agent_tool_calls",
       {{"turn_id", "agent_turns"}, {"candidate_id", "candidates"}, {"evaluation_id", "evaluations"}},
       "d.turn_id = x.turn_id AND d.seq = x.seq"},
  };
  return plan;
}

// Every foreign key of the schema must be a column the plan maps through its table's ids: a migration that
// adds one to an existing table would otherwise copy the source's ids unmapped, pointing at other rows.
void check_plan(const connection& db) {
  for (const table_copy& t : copy_plan()) {
    auto keys = db.prepare(
        fmt::format("SELECT \"from\", \"table\" FROM pragma_foreign_key_list('{}', 'main')", t.table),
        fmt::format("read the foreign keys of {}", t.table));
    while (keys.step()) {
      const std::string column = keys.column_text(0);
      if (std::none_of(t.references.begin(), t.references.end(),
                       [&](const reference& r) { return column == r.column; }))
        throw db_error(
            fmt::format("kj merge does not map {}.{} (a reference to {}): db/merge_plan.cpp must learn it",
                        t.table, column, keys.column_text(1)));
    }
  }
}

} // namespace kj::db::merge_detail
