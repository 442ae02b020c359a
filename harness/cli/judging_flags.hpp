// The command-line options of the judging settings that `kj run` and `kj agent` share (one definition of
// each: its name, check, default and help).
#pragma once

#include "harness/orchestrator/judging_settings.hpp"

#include <CLI/CLI.hpp>

namespace kj::cli {

// --timeout (with `timeout_help`: what one judging job is for this command), --build-timeout, --protocol,
// --precision, --library-policy, --max-library-share, and the timing options (add_timing_options).
void add_judging_options(CLI::App& cmd, orchestrator::judging_settings& judging, const char* timeout_help);

} // namespace kj::cli
