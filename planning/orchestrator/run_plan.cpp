// Implements the plan of `kj run`: candidate rows, resume and duplicate checks, one task per candidate.
#include "planning/orchestrator/run_plan.hpp"

#include "core/hashing.hpp"
#include "core/verdict.hpp"
#include "planning/verify/static_scan.hpp"

#include <fmt/core.h>
#include <map>
#include <stdexcept>
#include <string>

namespace kj::orchestrator {
namespace {

std::string name_of(const adapters::candidate& c, const kb::problem& p) {
  return c.path.empty() ? fmt::format("{} candidate {} sample {}", p.key(), c.producer, c.sample)
                        : c.path.string();
}

// An LLM adapter's reply without usable code: its evaluation is written without a worker.
results::evaluation_result no_code_result(const plan_inputs& in, const adapters::candidate& c,
                                          std::int64_t candidate_id) {
  const kb::problem& p = in.problems[c.problem_index];
  results::evaluation_result r;
  r.problem = {p.level, p.number, p.name, p.file_name};
  r.candidate = {c.producer, c.sample, c.path.string()};
  r.record = {in.run_id,   in.problem_ids[c.problem_index], candidate_id,
              in.stack_id, to_string(in.ctx.device),        "{}",
              ""};
  r.record.verdict = verdict::no_code;
  r.record.error = c.no_code;
  r.record.started_at = r.record.finished_at = core::now_iso8601();
  return r;
}

scheduler::task task_of(const plan_inputs& in, const adapters::candidate& c, std::int64_t candidate_id) {
  const kb::problem& p = in.problems[c.problem_index];
  db::evaluation_record record{in.run_id,
                               in.problem_ids[c.problem_index],
                               candidate_id,
                               in.stack_id,
                               to_string(in.ctx.device),
                               "{}",
                               evaluate_message(in.ctx, p, c).protocol.name};
  if (auto it = in.linked.find(c.problem_index); it != in.linked.end()) record.baseline_ids = it->second;
  if (!c.encoding_note.empty()) record.findings.push_back({"encoding", c.encoding_line, c.encoding_note});
  for (const auto& f : verify::scan_candidate(c.source))
    record.findings.push_back({f.kind, f.line, f.excerpt});
  return evaluation_task(in.ctx, p, c, std::move(record), in.on_result);
}

} // namespace

run_plan plan_run(db::store& store, const plan_inputs& in,
                  const std::vector<adapters::candidate>& candidates) {
  run_plan plan;
  std::map<std::int64_t, std::string> planned; // candidate id -> the first file that named it
  db::store::batch planning(store);            // the plan's candidate rows: one transaction
  for (const auto& c : candidates) {
    const kb::problem& p = in.problems[c.problem_index];
    try {
      const std::int64_t candidate_id = store.upsert_candidate(
          {in.problem_ids[c.problem_index], c.producer, c.sample, c.path.string(), c.source, "", c.bytes});
      if (const auto [it, fresh] = planned.emplace(candidate_id, name_of(c, p)); !fresh) {
        // Two files with the same source and sample number are one candidate: judged once.
        fmt::print(stderr, "kj: skipping candidate {}: the same source and sample as {}\n", name_of(c, p),
                   it->second);
        ++plan.duplicates;
        continue;
      }
      if (store.has_evaluation(in.run_id, candidate_id)) {
        ++plan.kept;
        continue;
      }
      if (in.passed && in.passed->contains(candidate_id)) {
        ++plan.not_failed;
        continue;
      }
      if (!c.no_code.empty()) {
        plan.no_code.push_back(no_code_result(in, c, candidate_id));
        continue;
      }
      plan.tasks.push_back(task_of(in, c, candidate_id));
    } catch (const kb::source_error& e) {
      throw kb::source_error(fmt::format("{}: {}", name_of(c, p), e.what()));
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("{}: {}", name_of(c, p), e.what()));
    }
  }
  planning.commit();
  return plan;
}

} // namespace kj::orchestrator
