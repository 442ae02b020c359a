// `kj audit`: the problem set judged before any candidate. One worker (the judge's Python, no runner: every
// "candidate" here is kj's own null output) audits the problems in order; each audit is stored (schema v10).
#pragma once

#include "core/precision.hpp"
#include "core/protocol.hpp"
#include "db/audit_records.hpp"
#include "kernelbench/problems.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::orchestrator {

struct audit_options {
  std::vector<kb::problem> problems;
  std::map<std::string, std::int64_t> overrides; // --set, on top of the built-in suite's CPU sizes
  std::string device = "auto";
  kj::protocol_kind protocol = kj::protocol_kind::kernelbench; // the compatible rule (per --kb-version)
  kj::precision precision = kj::precision::fp32;
  std::filesystem::path db_path = "kj.sqlite";
  std::filesystem::path cache_dir;
  double timeout_s = 3600; // the whole audit's worker
};

// One problem's audit as stored, with the null candidates' outcomes parsed.
struct audited_problem {
  const kb::problem* problem = nullptr;
  db::problem_audit_record record;
  nlohmann::json nulls; // {"zeros": {"compatible": true|false|null, "strict": ...}, ...}
};

// The null candidates, in the order kj_audit.py judges them (the first three compute nothing).
inline const std::vector<std::string> audit_nulls{"zeros", "mean", "input", "fp16", "bf16", "tf32"};

// The audits of one `kj audit`, in problem order; `stopped` says why it ended before the last problem
// (Ctrl-C, the timeout, a worker that cannot start), empty when every problem was audited.
struct audit_outcome {
  std::vector<audited_problem> audited;
  std::string stopped;
};

// Audits every problem and stores each audit as it arrives.
audit_outcome run_audit(const audit_options& options, std::string& device);

} // namespace kj::orchestrator
