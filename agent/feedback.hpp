// What the compile and verify tools tell the model: the build's errors, both verdicts, the failing case
// classes and the first mismatch; and the timing facts of an evaluation the other parts read. The first line
// of every text is its one-line summary (what stays when context management elides the rest).
#pragma once

#include "engine/exec/build_cache.hpp"
#include "planning/results/sinks.hpp"

#include <optional>
#include <string>

namespace kj::agent {

// The headline times of an evaluation's candidate and paired eager reference (median for the robust method,
// mean for kernelbench/cuda-agent), when it was timed.
struct headline {
  std::optional<double> candidate_ms, eager_ms;
  std::string statistic;   // "median" or "mean"
  std::size_t samples = 0; // the candidate's
  std::string method, clock;
  std::string untrusted; // why kj does not trust the candidate's time ("" when it does): no speedup from it
};
headline headline_of(const db::evaluation_record& record);

// The first 8 hex digits of the source's SHA-256: how results name a version of the workspace.
std::string short_hash(const std::string& source);

// compile{}: none (nothing compiles), or the build's status and, when it failed, the compiler's errors.
std::string compile_text(const std::optional<exec::build_record>& build, const std::string& hash);

// verify{}: both verdicts, the failing case classes with the first mismatch of each, findings.
std::string verify_text(const db::evaluation_record& record, const std::string& hash);

// The correctness part alone (used by profile too).
std::string correctness_text(const db::evaluation_record& record);

// The one-line verdict summary: "compatible correct, strict pass" / "compatible incorrect" / ...
std::string verdict_summary(const db::evaluation_record& record);

// `text` cut to at most `limit` bytes, keeping its head and tail with a note of what was left out.
std::string clip(const std::string& text, std::size_t limit);

} // namespace kj::agent
