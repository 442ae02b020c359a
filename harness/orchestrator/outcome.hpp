// Turns what a worker reported (or failed to report) into the evaluation record stored in the DB.
#pragma once

#include "db/store.hpp"
#include "harness/orchestrator/worker_process.hpp"

#include <string>

namespace kj::orchestrator {

// Fills verdict, error, trials and timings of `record` from the worker's events and exit status.
void fill_evaluation(const worker_outcome& outcome, const std::string& log_tail,
                     db::evaluation_record& record);

// A one-line description of how a worker ended ("killed by signal 11 (Segmentation fault)", ...).
std::string describe_exit(const worker_outcome& outcome);

} // namespace kj::orchestrator
