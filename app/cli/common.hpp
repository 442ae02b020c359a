// Options shared by several `kj` subcommands, and the error type that maps to exit code 2.
#pragma once

#include "db/store.hpp"
#include "engine/exec/messages.hpp"
#include "kernelbench/problems.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace kj::cli {

// Bad user input: printed as "kj: <message>" with exit code 2.
class usage_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The raw text of the problem-source options, resolved after parsing by resolve().
struct source_flags {
  std::string kernelbench;
  std::string kb_version = "main";
  std::string levels;
  std::string ids;
  std::vector<std::string> files;
  std::string ops6k;
  bool builtin = false;
  std::vector<std::string> sets;
  std::string problem_set = "all";
  std::string verified_file;

  void add_to(CLI::App& app);
  // Applies KERNELBENCH_DIR and the default (the built-in suite when no source is named).
  kb::source_options resolve() const;
  std::map<std::string, std::int64_t> overrides() const;
  // overrides(), refused (usage_error) when a name is assigned by none of `problems` at its top level: a
  // --set that would change nothing, most often a typo that would judge at full size.
  std::map<std::string, std::int64_t> overrides_for(const std::vector<kb::problem>& problems) const;
};

// Number checks whose messages read as a person writes a range ("--jobs: must be a whole number of at least
// 1, not '0'"), unlike CLI11's PositiveNumber, which prints the largest double in full.
CLI::Validator at_least(double minimum, bool whole = false); // >= minimum
CLI::Validator above(double bound);                          // > bound
CLI::Validator seconds();                                    // a duration in seconds, > 0, no unit
CLI::Validator run_id(); // a run's name: letters, digits, '-', '_', '.'; never 'latest'
CLI::Validator within(double low, double high, bool whole = false);

// --precision into a typed precision: `names` are the ones this command takes (kj run: fp32, fp16, bf16; kj
// baselines and kj audit: tf32 too); another name is refused, listing them. kj.toml's value goes the same
// way.
CLI::Option* add_precision_option(CLI::App& cmd, kj::precision& target, const std::string& help,
                                  const std::vector<std::string>& names);

// --protocol into a typed protocol kind (kernelbench or cuda-agent), likewise.
CLI::Option* add_protocol_option(CLI::App& cmd, kj::protocol_kind& target, const std::string& help);

// Fails with exit code 2 when KJ_PYTHON names no executable file (before any worker tries to start it).
void check_python_override();

// The timing method and the robust stopping rule's options (--timing-method, --min-samples, ...).
void add_timing_options(CLI::App& app, exec::timing_spec& timing);

std::string default_db_path();

// The run a reading command works on: `run` when the DB holds it, the latest run when `run` is empty; a
// usage_error naming the DB (and how to list its runs) otherwise.
std::string run_or_latest(const db::store& store, const std::string& run, const std::string& db_path);

// Writes text to path (replacing it); a usage_error naming the option (`what`) and the file when it cannot.
void write_text_file(const std::string& path, const std::string& text, const std::string& what);

} // namespace kj::cli
