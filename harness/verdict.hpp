// The verdicts an evaluation can end with, and how the orchestrator names them in the DB and on screen.
#pragma once

#include <array>
#include <optional>
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

inline std::optional<verdict> parse_verdict(std::string_view name) {
  for (std::size_t i = 0; i < verdict_names.size(); ++i)
    if (verdict_names[i] == name) return static_cast<verdict>(i);
  return std::nullopt;
}

} // namespace kj
