// `kj run`: the run planner. It resolves sources, device and candidates, records the run, and hands one task
// per candidate to the scheduler; the results flow to the DB and the console through sinks.
#pragma once

#include "adapters/generate/generate.hpp"
#include "db/store.hpp"
#include "engine/exec/messages.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"
#include "planning/orchestrator/run_session.hpp"
#include "planning/orchestrator/shard.hpp"

#include <filesystem>
#include <map>
#include <string>

namespace kj::orchestrator {

struct run_options {
  std::filesystem::path db_path = "kj.sqlite";
  std::string device = "auto"; // auto, cpu, cuda
  std::vector<int> gpus;       // device slots: one per listed GPU (default: every visible GPU)
  kb::source_options sources;
  std::string candidates;   // "" (the built-in examples), "identity", "examples" or a directory
  judging_settings judging; // protocol, precision, trials, timing, strict, --set, timeouts, limits
  std::string run_uid;      // resume this run when it exists
  std::filesystem::path cache_dir;
  bool keep_scratch = false;
  // A judge per evaluation, as before warm judges (exec/warm_worker.hpp): slower, for comparison and
  // debugging.
  bool fresh_judges = false;
  int build_jobs = 0; // parallel compile workers; 0: one per core, at most 8
  // Compiled baselines to compare with (eager is always timed in the run, paired with the candidate):
  // "cached" links the matching rows `kj baselines` measured, "none" nothing, or a comma-separated list of
  // modes that are measured first where the cache lacks them.
  std::string baselines = "cached";
  std::string command_line;
  adapters::generation_options generation; // an LLM adapter produces the candidates (instead of `candidates`)
  shard part;                    // judge only this shard's candidates (docs/scaling.md); 1/1: all of them
  std::string progress = "auto"; // a progress line per job: auto (when stderr is a terminal), always, never
  std::string producer;          // the label of imported candidates; "": default_producer (run_config.hpp)
  bool force = false;            // resume even when the options that define the run differ (recorded)
  std::string filter;            // -k: only problems or candidates whose name matches (run_filter.hpp)
  int maxfail = 0;               // stop after this many failed evaluations (0: never)
  bool rerun_failed = false;     // judge only the candidates that failed in the previous run of these options
  bool collect_only = false;     // print which candidate meets which problem; judge and record nothing
};

// Returns the process exit code: 0 when the run finished (whatever the verdicts), 2 on bad input, 130 on
// Ctrl-C.
int execute_run(const run_options& options);

// Records the problems (deduplicated by their natural key) and returns their ids, in order.
std::vector<std::int64_t> record_problems(db::store& store, const std::vector<kb::problem>& problems);

} // namespace kj::orchestrator
