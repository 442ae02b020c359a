// Turns what a worker reported (or failed to report) into the evaluation record stored in the DB.
#pragma once

#include "db/store.hpp"
#include "harness/exec/process.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::exec {

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
void fill_evaluation(const worker_outcome& outcome, const std::string& log_tail,
                     db::evaluation_record& record, const trace_policy& policy = {});

// A worker's "timing" event as a timing row: stop reason folded into params, statistics of the samples.
db::timing_record timing_from_event(const nlohmann::json& event);

// A one-line description of how a worker ended ("killed by signal 11 (Segmentation fault)", ...).
std::string describe_exit(const worker_outcome& outcome);

} // namespace kj::exec
