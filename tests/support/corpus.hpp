// The strict-verification corpora (tests/fixtures/strict, tests/fixtures/strict_cuda): each candidate's
// header says what `kj run` must record for it; these helpers run kj over a corpus and check every header.
#pragma once

#include "tests/support/paths.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace kj::test {

// The header of a corpus candidate (tests/fixtures/strict/README.md):
//   # kj-expect: <compatible verdict, or "any">
//   # kj-strict: pass | fail <class>[,<class>]
//   # <description>
//   # kj-finding: <kind>[,<kind>]        (optional)
struct corpus_expectation {
  std::string compatible;            // a verdict, or "any": the allocator (or similar) decides, anything goes
  std::string strict;                // "pass" or "fail"
  std::vector<std::string> classes;  // classes that must be among the failing ones
  std::vector<std::string> findings; // static findings that must be reported
};

// Reads the header of a candidate file; a missing `kj-expect` or `kj-strict` line fails the test (REQUIRE).
corpus_expectation read_corpus_expectation(const std::filesystem::path& candidate);

// The items of a comma-separated list ("random,shape"), empty items dropped.
std::vector<std::string> split_list(const std::string& text);

// Whether the comma-separated `list` has `item` as one of its items.
bool list_contains(const std::string& list, const std::string& item);

// Runs `kj run <args> --kernelbench <root>/problems --candidates <root>/candidates --db <dir>/kj.sqlite
// --cache-dir <cache>` in `dir`. The cache is $KJ_CACHE_DIR when set (extension builds outlive the test),
// else <dir>/cache. The corpus's shared module, <root>/kernels.py, is compiled first into
// <cache>/fixture-kernels/<corpus> and put on PYTHONPATH with <root>; a failed build's log opens `err`.
command_result run_corpus(const std::filesystem::path& root, const std::vector<std::string>& args,
                          const scratch_dir& dir);

struct corpus_counts {
  std::size_t honest = 0; // candidates whose header says strict `pass`
  std::size_t bad = 0;    // candidates whose header says strict `fail`
};

// Checks every result row of `db` (one per file of <root>/candidates) against its candidate's header:
// compatible verdict, strict verdict, the classes that must fail and the findings that must be reported. With
// a non-empty `device`, every row must also have run on it.
corpus_counts check_corpus_results(const std::filesystem::path& root, const std::filesystem::path& db,
                                   const std::string& device = "");

// Whether a failed `kj run --device cuda` failed only because torch in kj's embedded Python sees no CUDA
// device (kj's own test of "is there a GPU", planning/orchestrator/run.cpp).
bool no_cuda_device(const command_result& run);

// Ends the current test as skipped: Catch2's SKIP where it has one (v3.3 and later), and in any case a line
// with `kj-test-skipped` on stdout, which tests/CMakeLists.txt gives CTest as SKIP_REGULAR_EXPRESSION. Under
// Catch2 v2 the test then returns normally: the caller must return right after.
void skip_test(const std::string& why);

} // namespace kj::test
