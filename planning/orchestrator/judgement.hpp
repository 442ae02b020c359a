// The one place an evaluation's record is judged: what a worker reported (or failed to report), or a build
// that did not end "ok", becomes the verdict, the trials, the timings, the strict cases and the strict
// verdict. exec/ runs processes and carries messages; the rules that turn them into verdicts live here.
#pragma once

#include "db/store.hpp"
#include "engine/exec/build_cache.hpp"
#include "engine/exec/process.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::orchestrator {

// What the strict verdict makes of the candidate's kernel trace (docs/methodology.md, "Kernel trace").
struct trace_policy {
  // "report": library share recorded only; "forbid-torch": fail when PyTorch's own kernels (aten, inductor)
  // exceed max_library_share of the candidate's kernel time; "forbid-all": the same for any library kernel.
  std::string library_policy = "report";
  double max_library_share = 0.5;
};

// The strict case rows derived from a trace summary (the worker's "trace" JSON): `side_stream` always,
// `library` unless the policy is "report". Empty when there is no usable trace (CPU, or tracing failed).
std::vector<db::case_record> trace_cases(const nlohmann::json& trace, const trace_policy& policy);

// The strict verdict from the compatible verdict and the cases: pass only when the compatible verdict is
// correct and no case class failed; also labels a degenerate problem (constant reference output).
void judge_strict(db::evaluation_record& record);

// Fills verdict, error, trials, timings, strict cases and the strict verdict of `record` from the worker's
// events and exit status.
void fill_evaluation(const exec::worker_outcome& outcome, const std::string& log_tail,
                     db::evaluation_record& record, const trace_policy& policy = {});

// With --no-strict the strict classes did not run: the record has no strict verdict (docs/schema.md), not a
// "pass".
void without_strict(db::evaluation_record& record);

// A build that did not end "ok" is the evaluation's verdict (its status: compile_error, load_error, ...):
// nothing was run.
void fill_from_build(db::evaluation_record& record, const exec::build_record& build);

// A worker's "timing" event as a timing row: stop reason folded into params, statistics of the samples.
db::timing_record timing_from_event(const nlohmann::json& event);

} // namespace kj::orchestrator
