// The verified problem set: KernelBench main's problems as `kj audit` judged them on a GPU, shipped as a
// versioned file (kernelbench/verified/kernelbench-main.json; docs/verified.md gives its format and how it
// was made). `--problems verified` keeps the problems it calls sound; results and reports mark the others.
#pragma once

#include "core/precision.hpp"

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kj::kb {

// One problem's entry: its identity (level, number, name, the sha256 of its source) and, per precision it was
// audited at, a status and why.
struct verified_problem {
  int level = 0;
  int number = 0;
  std::string name;
  std::string sha256;
  std::map<std::string, std::string> status; // precision -> sound, weak, unsound, error or unaudited
  std::map<std::string, std::string> why;    // precision -> the audit's reasons or notes, one per line
  std::vector<std::string> public_reports;   // "KernelBench PR #108 (agrees): ..."
};

// A problem's standing in the set at one precision.
struct verified_status {
  // sound: no null candidate passes either rule and the reference is deterministic and not constant;
  // weak: KernelBench's rule accepts a null candidate (kj's strict rule rejects it); unsound: the strict rule
  // accepts one, or the reference is stochastic or constant; error: the problem could not be run (its import,
  // inputs or Model raised); unaudited: no audit of it at this precision, or kj's audit ran out of memory on
  // it (kj's failure, not the problem's); changed: the problem's source is not the one audited; absent: not
  // in the set.
  std::string status;
  std::string why;
  std::string precision; // the audit's precision it comes from ('' when changed or absent)
};

struct verified_set {
  std::filesystem::path file;
  std::string version;            // the set's version (a date)
  std::string kernelbench_commit; // the KernelBench checkout it audited
  std::string audited_on;         // the GPU and stack
  std::vector<verified_problem> problems;

  // The standing of problem (level, number, name) with source hash sha256 at `precision`; a problem the set
  // has no audit of at that precision is unaudited (never another precision's standing: bf16's tolerance is
  // 100x looser than fp32's).
  verified_status status_of(int level, int number, const std::string& name, const std::string& sha256,
                            kj::precision at) const;
};

// Whether `name` names a precision a set holds audits at (fp32, tf32, bf16, fp16: kj::precision's names).
bool is_verified_precision(const std::string& precision);

// Reads a verified-set file; throws source_error naming the file and the field that is missing or malformed.
verified_set load_verified_set(const std::filesystem::path& file);

// $KJ_VERIFIED_SET when set, else the source tree's kernelbench/verified/kernelbench-main.json.
std::filesystem::path default_verified_file();

} // namespace kj::kb
