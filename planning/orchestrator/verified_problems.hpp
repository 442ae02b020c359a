// The verified problem set where problems are chosen (--problems verified) and where results are read (each
// row marked with its problem's standing in the set).
#pragma once

#include "kernelbench/problems.hpp"
#include "kernelbench/verified.hpp"
#include "reports/metrics.hpp"

#include <vector>

namespace kj::orchestrator {

// The problems the verified set (options.verified_file, else the shipped one) calls sound at
// options.precision; one line on stderr says how many were left out and why. Throws kb::source_error when the
// file is unreadable or no selected problem is left.
std::vector<kb::problem> keep_verified(std::vector<kb::problem> problems, const kb::source_options& options);

// Each row of KernelBench main gets its problem's standing (result_row::verified, verified_why) and, when the
// set calls it unsound and no `kj audit` in the DB already said why, the reason
// (result_row::unsound_problem).
void mark_verified(std::vector<reports::result_row>& rows, const kb::verified_set& set);

// Drops rows whose problem the set does not call sound (kj results --problems verified).
void keep_verified_rows(std::vector<reports::result_row>& rows);

} // namespace kj::orchestrator
