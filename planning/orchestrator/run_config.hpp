// The options that define a run, as stored in runs.config_json, and the check that a resume keeps them.
#pragma once

#include "planning/orchestrator/run.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::orchestrator {

// What --candidates names, made unambiguous: "builtin:identity" and "builtin:examples" are the built-in
// sources ("identity", "examples"); a bare "identity" or "examples" is the built-in one unless a folder or
// file of that name exists, which then wins ("./identity", with a note on stderr). Throws kb::source_error
// for an unknown "builtin:" name.
std::string resolve_candidates(const std::string& given);

// The producer label of a run's imported candidates: --producer, else "identity", "examples", or the name of
// the candidates folder (of the folder holding a --candidates FILE; "identity/" for a folder named like a
// built-in source). "" for an LLM adapter's run (the adapter labels its candidates "<adapter>/<model>").
std::string default_producer(const run_options& options);

// The resolved options as runs.config_json stores them (config_version 2: also the problem selection, the
// producer, the strict flag and the -k filter, with paths made absolute), but the device: the session adds
// it ("device") once it knows which one the run judges on.
nlohmann::json run_config(const run_options& options);

// How candidates are judged, as a run's config records it (kj run's and kj agent's alike): the judging
// settings whole, the sandbox and seccomp.
nlohmann::json judging_config(const judging_settings& judging);
// The problem selection as a run's config records it (`sources`: kernelbench, levels, ids, files, ops6k,
// builtin), for kj run and kj agent alike.
nlohmann::json source_selection(const kb::source_options& sources);

// The options that define the run and differ between a stored config and this command's, one line each,
// e.g. "--ids: 1-3 in the run, 1-5 now". Operational options (timeouts, limits, jobs, GPUs, progress, cache
// folder, --maxfail) may change; a config of an older kj (config_version < 2) is not compared.
std::vector<std::string> config_differences(const nlohmann::json& stored, const nlohmann::json& now);

} // namespace kj::orchestrator
