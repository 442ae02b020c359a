// The setup of `kj run` before anything is judged: the imported candidates and the -k filter, the run record
// (created, or resumed when its options match), and the guard that never leaves a failed setup `running`.
#pragma once

#include "adapters/candidates.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/orchestrator/shard.hpp"

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::orchestrator {

// What the setup of `kj run` acts on, resolved once from its options at the front door (execute_run): the
// producer label, the defining options as the run's config records them (the device is added once the
// session knows it), the cache folder. Every setup step below takes this, not the options.
struct run_inputs {
  std::string producer;            // default_producer
  nlohmann::json config;           // run_config, without the device
  std::filesystem::path cache_dir; // exec::cache_dir_or_default
  std::filesystem::path db_path;
  kb::source_options sources;
  std::string candidates; // as --candidates gave it
  std::string filter;     // -k
  adapters::generation_options generation;
  shard part;
  bool force = false;
  std::string command_line;
};

// The candidates of --candidates (a folder, a file, identity, examples) under the run's producer, read before
// the run is recorded; files that match no selected problem are summed up in one line. Throws
// kb::source_error when no candidate is left.
std::vector<adapters::candidate> import_candidates(const run_inputs& inputs,
                                                   const std::vector<kb::problem>& problems,
                                                   const std::string& device);

// Whether a problem or candidate matches -k PATTERN: a case-insensitive substring of "L<level>/<file name>",
// the candidate's file name or its producer. An empty pattern matches everything.
bool matches_filter(const std::string& pattern, const kb::problem& problem,
                    const adapters::candidate& candidate);
// The candidates that match; throws kb::source_error when none does.
std::vector<adapters::candidate> filter_candidates(const std::string& pattern,
                                                   const std::vector<kb::problem>& problems,
                                                   std::vector<adapters::candidate> candidates);

// -k for an LLM adapter's run, before anything is asked of the model: the problems whose L<level>/<file name>
// contains the pattern (all of them when the pattern names the producer); throws kb::source_error when none.
std::vector<kb::problem> filter_problems(const std::string& pattern, std::vector<kb::problem> problems,
                                         const std::string& producer);

struct run_handle {
  std::int64_t id = 0;
  std::string uid;
  bool fresh = false; // created by this command (not resumed)
};

// Creates the run, or resumes it: a run's shard and defining options must match (kb::source_error naming each
// difference) unless `inputs.force`, which records the differences in the run's detail and config. `config`
// is the inputs' config with the session's device.
run_handle open_run(db::store& store, const run_inputs& inputs, const std::string& run_uid,
                    const nlohmann::json& config, const std::string& device, std::int64_t stack_id);

// The run --rerun-failed takes its failures from: the newest other run whose defining options are this
// command's (-k aside); throws kb::source_error when there is none.
run_handle previous_run(const db::store& store, const nlohmann::json& config, const std::string& run_uid);

// While alive, an exception leaves the run `failed` (its message in the run's detail), or removes it when
// this command created it and nothing was recorded under it yet. release() once the run ended on its own.
class run_guard {
public:
  run_guard(db::store& store, run_handle run) : m_store(store), m_run(std::move(run)) {}
  ~run_guard();
  run_guard(const run_guard&) = delete;
  run_guard& operator=(const run_guard&) = delete;
  void fail(const std::string& why); // marks the run failed now (or removes it), and releases
  void release() { m_released = true; }

private:
  db::store& m_store;
  run_handle m_run;
  bool m_released = false;
};

// Refuses (kb::source_error) a --db, --candidates folder or cache folder under one of `exposed` (what the
// candidates' sandbox exposes read-only), naming both; nothing is refused without a namespace sandbox.
void refuse_exposed(const run_inputs& inputs, const std::vector<std::filesystem::path>& exposed);

// Refuses (kb::source_error) a --timeout or --build-timeout below 10 s or 4 x what kj's own worker took to
// start on this machine (`env`'s kj_boot, from the probe), and a --memory-limit below twice its resident
// memory, naming the measurement and the least to give.
void refuse_limits_below_kj(const judging_settings& judging, const nlohmann::json& env);

} // namespace kj::orchestrator
