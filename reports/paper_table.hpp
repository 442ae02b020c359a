// Table 1 of the CUDA Agent paper in its own layout (pass rate, faster than eager, faster than compile,
// geomean vs eager and vs compile; overall and per level), computed from the DB with bootstrap intervals over
// problems, next to the published numbers (reports/data/paper_table1.json).
#pragma once

#include "reports/metrics.hpp"

#include <optional>
#include <string>
#include <vector>

namespace kj::reports {

struct estimate {
  std::optional<double> value;
  stats::interval ci;
};

// The paper's five columns, plus the geomeans with failures counted as 1.0 (the paper does not say which).
struct table1_cells {
  std::size_t evaluations = 0;
  std::size_t problems = 0;
  estimate pass_rate;
  estimate faster_than_eager;
  estimate faster_than_compile;
  estimate geomean_vs_eager;   // over correct evaluations with a speedup
  estimate geomean_vs_compile; // over correct evaluations with a speedup
  estimate geomean_vs_eager_all;
  estimate geomean_vs_compile_all;
};

struct table1_row {
  std::string system; // the producer
  std::string level;  // "overall", "L1", "L2", ...
  table1_cells cells;
};

struct published_row {
  std::string system;
  std::string level;
  std::optional<double> tasks;
  std::optional<double> pass_rate, faster_than_eager, faster_than_compile, geomean_vs_eager,
      geomean_vs_compile;
};

struct published_table {
  std::string source;
  std::string protocol;
  std::vector<std::string> notes;
  std::vector<published_row> rows;
};

struct table1 {
  std::string basis; // "compatible" (the paper's rules) or "strict" (a strict failure is a failure)
  std::vector<table1_row> rows;
};

// The rows per producer: overall first, then each level. `strict` counts strict failures as failures.
table1 paper_table(const std::vector<result_row>& rows, bool strict, const stats::bootstrap_options& options);

// The published numbers, parsed from the data file built into kj. Throws std::runtime_error naming the field
// when the file is malformed.
published_table published_table1();
published_table parse_published_table(const std::string& json_text, const std::string& origin);

} // namespace kj::reports
