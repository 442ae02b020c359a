// A published set's claims beside kj's measurements (issue 42): each row of an imported claims.json
// (`kj import`, adapters/published/) matched by level and problem id to a run's evaluation, the claimed and
// measured speedups over eager and torch.compile side by side, and for every difference the reason kj can
// name: no kernel, not judged, not counted correct (the verdict and why), strict failing (lower precision, a
// hack class), a time kj does not trust, noise, or a measured speedup that differs (GPU, timing method).
#pragma once

#include "reports/metrics.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kj::reports {

struct claim_row {
  int level = 0;
  int problem_id = 0;
  std::string name;
  std::string reference; // identical, differs, not in KernelBench, no KernelBench given
  bool kernel = false;   // the release has a kernel for it
  std::optional<double> claimed_eager, claimed_compile, claimed_reduce_overhead;
  std::optional<double> measured_eager, measured_compile, measured_reduce_overhead;
  std::string verdict;        // the run's compatible verdict; "" when not judged
  std::string strict_verdict; // pass, fail or ""
  bool counted_correct = false;
  std::string explanation; // the reason kj names for any difference ("agrees" when none)
};

struct claims_comparison {
  std::string source, gpu, run, device_name;
  std::vector<claim_row> rows;
};

// Matches `claims` (claims.json's content) with `results` (one run's rows); throws std::invalid_argument
// naming the field when claims.json is not kj-claims-1.
claims_comparison compare_claims(const nlohmann::json& claims, const std::vector<result_row>& results,
                                 const std::string& run, const std::string& device_name);

// The per-row table and a summary per level: rows, kernels, judged, counted correct, and the geomeans of
// claimed and measured speedup over eager on the problems counted correct that both have.
void write_claims_table(const claims_comparison& c, std::ostream& out);
void write_claims_markdown(const claims_comparison& c, std::ostream& out);
nlohmann::json claims_json(const claims_comparison& c);

} // namespace kj::reports
