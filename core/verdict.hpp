// The verdicts an evaluation can end with, and how the orchestrator names them in the DB and on screen; the
// strict verdict; and the one rule for what counts as correct.
#pragma once

#include "core/enum_names.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kj {

enum class verdict {
  correct,       // every correctness trial passed
  incorrect,     // ran, but an output differs from the reference (values, shape, type)
  compile_error, // the candidate's extension failed to build
  load_error,    // the candidate file does not import: syntax error, no ModelNew, an exception at import
  runtime_error, // ModelNew's constructor or forward raised
  timeout,       // the job exceeded its wall-clock limit and was killed
  crashed,       // the worker died: a signal (segfault, abort), os._exit, out of memory
  problem_error, // the problem itself does not load (not the candidate's fault)
  harness_error, // kerneljudge itself failed on this job (e.g. out of memory while comparing outputs)
  oom,           // the device ran out of memory (the message names the bytes the inputs take)
  needs_weights, // the problem loads a Hugging Face model that is not available offline (KernelBench L4)
  no_code,       // an LLM adapter's reply had no usable code block (never run; the reason is the error)
};

inline constexpr std::array<std::string_view, 12> verdict_names{
    "correct", "incorrect",     "compile_error", "load_error", "runtime_error", "timeout",
    "crashed", "problem_error", "harness_error", "oom",        "needs_weights", "no_code"};

inline std::string_view to_string(verdict v) {
  return verdict_names[static_cast<std::size_t>(v)];
}

inline std::string name_of(verdict v) {
  return std::string(to_string(v));
}

inline std::optional<verdict> parse_verdict(std::string_view name) {
  return parse_in<verdict>(verdict_names, name);
}

// The strict verdict (docs/methodology.md): the strict case classes all passed, one failed, kj itself could
// not decide one (never the candidate's failure), or none ran (--no-strict, or the compatible verdict was not
// correct).
enum class strict_verdict { pass, fail, harness_error, none };

inline constexpr std::array<std::string_view, 4> strict_verdict_names{"pass", "fail", "harness_error", ""};

inline std::string_view to_string(strict_verdict v) {
  return strict_verdict_names[static_cast<std::size_t>(v)];
}

inline std::string name_of(strict_verdict v) {
  return std::string(to_string(v));
}

inline std::optional<strict_verdict> parse_strict_verdict(std::string_view name) {
  return parse_in<strict_verdict>(strict_verdict_names, name);
}

// One strict case's status (schema v2, harness_error since v10): it passed, failed, told nothing (the
// reference's output constant or non-finite on that input), or kj itself could not judge it (never the
// candidate's failure).
enum class case_status { pass, fail, uninformative, harness_error };

inline constexpr std::array<std::string_view, 4> case_status_names{"pass", "fail", "uninformative",
                                                                   "harness_error"};

inline std::string name_of(case_status s) {
  return name_in(case_status_names, s);
}

inline std::optional<case_status> parse_case_status(std::string_view name) {
  return parse_in<case_status>(case_status_names, name);
}

// The one rule every count of correct candidates uses (results, reports, the paper table, a run's exit code,
// the agent's feedback): the compatible verdict is correct and the strict verdict did not fail. A strict
// verdict kj could not decide, or that did not run, does not take a candidate's correctness away.
inline bool counted_correct(verdict v, strict_verdict strict) {
  return v == verdict::correct && strict != strict_verdict::fail;
}

// The same rule over the names the DB stores (an unknown name is not correct).
inline bool counted_correct(std::string_view verdict_name, std::string_view strict_name) {
  const auto v = parse_verdict(verdict_name);
  const auto s = parse_strict_verdict(strict_name);
  return v && counted_correct(*v, s.value_or(strict_verdict::none));
}

} // namespace kj
