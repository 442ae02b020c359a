// Problem discovery: a KernelBench checkout, single problem files, and kerneljudge's built-in suite.
#pragma once

#include "core/precision.hpp"
#include "kernelbench/id_set.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::kb {

// Bad input from the user (a missing path, a malformed id list); the message names what and where.
class source_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The whole file as bytes; source_error "cannot read <what> <path>" when it cannot be read.
std::string read_file_bytes(const std::filesystem::path& path, const std::string& what);

struct problem {
  std::string suite;      // "kernelbench", "builtin", "file" or "cuda-agent-ops-6k"
  std::string kb_version; // "main", "v0.1", "v0" (the tolerance rules to apply)
  int level = 0;
  int number = 0;
  std::string name;      // file stem after "<number>_"
  std::string file_name; // "<number>_<name>.py"
  std::filesystem::path path;
  std::string source;
  std::string source_commit;                         // git commit of the checkout when known
  std::map<std::string, std::int64_t> cpu_overrides; // built-in suite: sizes for --device cpu

  std::string key() const; // "L<level>/<file_name>", unique within a source
  // The module-constant overrides a job on `device` gets: the built-in CPU sizes on the CPU, then `user`'s.
  std::map<std::string, std::int64_t> overrides_for(const std::string& device,
                                                    const std::map<std::string, std::int64_t>& user) const;
};

struct source_options {
  std::filesystem::path kernelbench_dir; // a checkout (or its KernelBench/ folder); empty: not used
  std::string kb_version = "main";
  std::vector<int> levels;                  // empty: every level found
  id_set ids;                               // empty: every id
  std::vector<std::filesystem::path> files; // single problem files
  bool builtin = false;                     // the built-in suite
  // CUDA-Agent-Ops-6K's parquet file; empty: not used. Reading it needs Python (pyarrow), so load_problems
  // ignores it: planning/orchestrator/problem_sources.hpp loads it in a worker, with `ids` as row numbers.
  std::filesystem::path ops6k_path;
  // "verified": only the problems the verified set (kernelbench/verified.hpp) calls sound at `precision`;
  // "all": every selected problem. Applied by orchestrator::load_all_problems.
  std::string problem_set = "all";
  std::filesystem::path verified_file; // empty: kb::default_verified_file()
  kj::precision precision = kj::precision::fp32;
};

// Loads every selected problem but those of ops6k_path, sorted by suite, level, number. Throws source_error
// on bad paths or when a selection matches nothing.
std::vector<problem> load_problems(const source_options& options);

// The names of `overrides` (--set NAME=INTEGER) that no problem assigns at its top level (`NAME = ...` at
// the start of a line): a --set that would change nothing, most often a typo.
std::vector<std::string> unmatched_overrides(const std::vector<problem>& problems,
                                             const std::map<std::string, std::int64_t>& overrides);

// The built-in suite's folder: $KJ_SUITE_DIR, else the source tree's kernelbench/suite.
std::filesystem::path builtin_suite_dir();

// Parses "<number>_<name>.py" into (number, name); false when the file name is not of that form.
bool parse_problem_file_name(const std::string& file_name, int& number, std::string& name);

// The git commit at HEAD of the repository holding `dir`, or "" when it is not a git checkout or git does not
// track dir's files (a copy inside another repository, untracked or ignored there).
std::string git_commit_of(const std::filesystem::path& dir);

} // namespace kj::kb
