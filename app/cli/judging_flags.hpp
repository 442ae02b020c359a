// The command-line options of the judging settings that `kj run` and `kj agent` share (one definition of
// each: its name, check, default and help).
#pragma once

#include "planning/orchestrator/judging_settings.hpp"

#include <CLI/CLI.hpp>

namespace kj::cli {

// --timeout (with `timeout_help`: what one judging job is for this command), --build-timeout, --protocol,
// --precision, --library-policy, --max-library-share, the timing options (add_timing_options),
// --memory-limit,
// --process-limit, --input-rng, --trials, --rounds, --no-output-check, --graphs, --no-floor and --no-strict
// (`kj run` adds --no-timing: the agent's profile step always times).
void add_judging_options(CLI::App& cmd, orchestrator::judging_settings& judging, const char* timeout_help);

} // namespace kj::cli
