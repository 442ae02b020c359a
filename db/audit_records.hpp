// Records of the problem audit (schema v10, `kj audit`): one row per problem audited on a stack and device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kj::db {

// What the null candidates got from each rule, whether the reference is stochastic or constant, how much of
// KernelBench's tolerance the fp32 reference's own rounding uses, and the verdict on the problem itself.
struct problem_audit_record {
  std::int64_t id = 0;
  std::int64_t problem_id = 0;
  std::int64_t stack_id = 0;
  std::string device;
  std::string protocol; // the compatible rule's protocol name, e.g. kernelbench-main
  std::string created_at;
  bool unsound = false;
  bool stochastic = false;
  bool constant_reference = false;
  std::optional<double> tolerance_use; // NULL when no float64 reference could be computed
  std::string reasons;                 // why unsound, one per line ('' when sound)
  std::string notes;                   // what else was found, one per line
  std::string nulls_json;              // {"zeros": {"compatible": true|false|null, "strict": ...}, ...}
  std::string error;                   // the problem's own failure ('' when audited)
};

} // namespace kj::db
