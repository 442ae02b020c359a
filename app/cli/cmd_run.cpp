// `kj run`: judge candidates against problems and store every verdict and timing in the DB.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/generation_flags.hpp"
#include "app/cli/judging_flags.hpp"
#include "app/cli/run_summary.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/orchestrator/run_config.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <memory>

namespace kj::cli {
namespace {

// --quick: short robust timing, for a first look on a CPU; an option the user gave keeps its value.
void apply_quick(const CLI::App& cmd, exec::timing_spec& timing) {
  const auto given = [&](const char* flag) { return cmd.count(flag) > 0; };
  if (!given("--min-samples")) timing.min_samples = 5;
  if (!given("--min-time-ms")) timing.min_time_ms = 20;
  if (!given("--max-time-ms")) timing.max_time_ms = 200;
  // A 2% interval: on the CPU every sample follows a flush of the last-level cache (a few ms), and 0.5% takes
  // hundreds of samples for a sub-millisecond problem (the built-in suite's judging: 76 s -> 48 s).
  if (!given("--target-ci")) timing.target_rel_ci = 0.02;
  if (!given("--rounds")) timing.rounds = 1;
  if (!given("--no-floor")) timing.floor = false;
}

// kj run's options as parsed.
struct state {
  orchestrator::run_options options;
  source_flags sources;
  std::string cache_dir;
  bool quick = false;
  std::string shard;
  std::string summary_json;
  generation_flags generation;
};

// kj run's work after its options are parsed: resolve them, then run (exit code).
int run_command(state& s, const CLI::App& cmd, int argc, char** argv) {
  check_python_override();
  if (s.quick) apply_quick(cmd, s.options.judging.timing);
  for (int i = 0; i < argc; ++i)
    s.options.command_line += (i ? " " : "") + std::string(argv[i]);
  s.options.candidates = orchestrator::resolve_candidates(s.options.candidates);
  s.options.sources = s.sources.resolve();
  s.options.sources.precision = s.options.judging.precision; // --problems verified: the run's precision
  // The run loads its problems later (planning); they are read here too only to check --set's names.
  s.options.judging.overrides = !s.sources.sets.empty() && s.options.sources.ops6k_path.empty()
                                    ? s.sources.overrides_for(kb::load_problems(s.options.sources))
                                    : s.sources.overrides();
  s.options.cache_dir = s.cache_dir;
  s.options.generation = s.generation.resolve();
  if (s.options.generation.active() && !s.options.candidates.empty())
    throw usage_error("--candidates and --adapter both name where candidates come from: give one");
  if (s.options.device == "cpu" && !s.options.gpus.empty())
    throw usage_error(fmt::format("--gpus {} with --device cpu: --gpus picks CUDA devices",
                                  fmt::join(s.options.gpus, ",")));
  if (s.options.collect_only && s.options.rerun_failed)
    throw usage_error(
        "--collect-only with --rerun-failed: --collect-only reads no database, so it cannot tell "
        "which candidates failed before; kj results --run ID lists each candidate's verdict");
  if (std::error_code ec; s.options.rerun_failed && !std::filesystem::exists(s.options.db_path, ec))
    throw usage_error(fmt::format("--rerun-failed: there is no database at {} (it reruns what failed in an "
                                  "earlier run there: give that run's --db)",
                                  s.options.db_path.string()));
  if (!s.shard.empty()) s.options.part = orchestrator::parse_shard(s.shard);
  if (s.options.part.partial() && s.options.generation.active() && s.options.generation.adapter != "replay")
    throw usage_error(fmt::format(
        "--shard {} with --adapter {}: every shard would ask the model for every problem; generate once "
        "(kj generate), then judge in shards with --adapter replay --from RUN_ID or --candidates DIR",
        s.shard, s.options.generation.adapter));
  if (s.options.generation.active() && !s.options.producer.empty())
    throw usage_error("--producer labels imported candidates; an --adapter's are labelled <adapter>/<model>");
  require_credentials(s.options.generation);
  return orchestrator::execute_run(s.options);
}

} // namespace

action add_run_command(CLI::App& app, int argc, char** argv) {
  auto* cmd = app.add_subcommand("run", "Judge candidates against problems; results go to the SQLite DB");
  auto s = std::make_shared<state>();
  s->options.db_path = default_db_path();
  cmd->add_option("--db", s->options.db_path, "SQLite file to write (created if missing)")
      ->capture_default_str();
  cmd->add_option("--device", s->options.device, "auto (cuda when torch sees a GPU, else cpu), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--gpus", s->options.gpus,
                  "CUDA: the GPUs to judge on, e.g. 0,1: one device slot each, which judges one candidate "
                  "at a time with CUDA_VISIBLE_DEVICES set to its GPU (default: every GPU torch sees); "
                  "numbered as torch numbers them under kj's own CUDA_VISIBLE_DEVICES, if set")
      ->delimiter(',')
      ->check(at_least(0, true));
  s->sources.add_to(*cmd);
  cmd->add_option(
      "--candidates", s->options.candidates,
      "where candidates come from: a directory of KernelBench-style files "
      "(level_L_problem_N_sample_S_kernel.py or <problem file>.py), one such file (any .py file when one "
      "problem is selected), builtin:identity (each problem's own Model, for calibration) or "
      "builtin:examples "
      "(the built-in suite's examples; the default for it); a bare identity or examples means the built-in "
      "source unless a folder or file of that name exists (the path wins, labelled identity/)");
  cmd->add_option("--producer", s->options.producer,
                  "label of the candidates' producer (the model or agent that wrote them), used by results, "
                  "reports and compare (default: the --candidates folder's name; identity, examples; an "
                  "--adapter's is <adapter>/<model>)");
  s->generation.add_to(*cmd, generation_use::run);
  add_judging_options(
      *cmd, s->options.judging,
      "seconds the candidate's process may take while it is judged: kj's own work beside it (the reference, "
      "the checks of its outputs) is not counted (its build has --build-timeout)");
  cmd->add_option(
         "--run-id", s->options.run_uid,
         "name of the run; an existing run with this id is resumed: the candidates it already "
         "judged are kept, the others run (also after Ctrl-C or kill -9); letters, digits, '-', '_' and '.'")
      ->check(run_id());
  cmd->add_flag("--force", s->options.force,
                "resume a --run-id whose options differ from this command's (extending it with these "
                "options; the change is recorded in the run)");
  cmd->add_option("-k", s->options.filter,
                  "only problems or candidates whose name contains PATTERN (case-insensitive; matched "
                  "against L<level>/<problem file>, the candidate's file name and its producer)");
  cmd->add_option("--maxfail", s->options.maxfail,
                  "stop after N failed evaluations of this invocation (verdict not correct, or strict fail; "
                  "a resumed run's earlier ones not counted); the run stays "
                  "resumable, exit code 1")
      ->check(at_least(1, true));
  cmd->add_flag("--rerun-failed", s->options.rerun_failed,
                "judge only the candidates that did not pass in the newest earlier run with these options: "
                "those that failed, and those it never judged when it stopped early (--maxfail, Ctrl-C)");
  cmd->add_flag("--quick", s->quick,
                "a short first look (CPU: seconds per candidate): robust timing with --min-samples 5 "
                "--min-time-ms 20 --max-time-ms 200 --target-ci 0.02 --rounds 1 --no-floor (options given "
                "explicitly win); "
                "the verdicts are the same, the times noisier");
  cmd->add_option("--shard", s->shard,
                  "judge only shard I of N (e.g. 2/4): a fixed partition of the candidates by a hash of "
                  "problem, candidate source and sample; each shard writes its own DB, kj merge combines "
                  "them (docs/scaling.md)");
  cmd->add_option(
         "--progress", s->options.progress,
         "progress on stderr: always (a line per judged candidate: tallies, throughput, ETA; "
         "and what runs when kj is silent), log (a status line every minute, or $KJ_HEARTBEAT_S "
         "seconds: counts, rate, ETA and what runs, for a CI log or nohup), never (no progress lines: the "
         "run's id, warnings and the final tally still print), or auto (always on a terminal, else log)")
      ->check(CLI::IsMember({"auto", "always", "log", "never"}))
      ->capture_default_str();
  cmd->add_option("--cache-dir", s->cache_dir,
                  "build cache and scratch folder (default: $KJ_CACHE_DIR or ~/.cache/kerneljudge)");
  cmd->add_flag("--keep-scratch", s->options.keep_scratch,
                "keep each job's scratch folder (job.json, worker.log)");
  cmd->add_flag("--fresh-judges", s->options.fresh_judges,
                "start a judge process for every evaluation instead of one per device slot that stays warm "
                "(slower: Python, torch and the device context start each time; for comparison)");
  cmd->add_option("-j,--jobs,--build-jobs", s->options.build_jobs,
                  "candidates compiled at once (default: one per core, at most 8): on CUDA while the GPUs "
                  "judge earlier candidates, on the CPU all before the first is judged")
      ->check(at_least(1, true));
  cmd->add_option(
         "--baselines", s->options.baselines,
         "compiled baselines to report speedups against (eager is always timed in the run): cached "
         "(those kj baselines measured with matching problem, sizes, precision, timing and stack), "
         "none, or modes to measure first where the cache lacks them, e.g. compile-default,max-autotune")
      ->capture_default_str();
  cmd->add_flag("!--no-timing", s->options.judging.timing.enabled, "check correctness only");
  cmd->add_flag("--collect-only", s->options.collect_only,
                "show which candidate would be judged against which problem and which would be compiled, "
                "then stop: nothing is built, judged or recorded, and no database is read (so not with "
                "--rerun-failed)");
  cmd->add_option(
      "--summary-json", s->summary_json,
      "also write FILE: the run's id, exit code, status, counts by verdict and strict verdict and "
      "one line per evaluation, as JSON (for CI; written on failures too)");
  return [s, cmd, argc, argv] {
    if (s->summary_json.empty()) return run_command(*s, *cmd, argc, argv);
    check_summary_path(s->summary_json); // before anything else: a refused run still writes its summary
    if (s->options.run_uid.empty()) s->options.run_uid = orchestrator::new_run_uid(); // named in the summary
    int code = 0;
    std::string error;
    try {
      code = run_command(*s, *cmd, argc, argv);
    } catch (const std::exception& e) {
      error = e.what();
      const bool bad_input = dynamic_cast<const usage_error*>(&e) ||
                             dynamic_cast<const kb::source_error*>(&e) ||
                             dynamic_cast<const db::db_error*>(&e);
      code = bad_input ? 2 : 1; // as kj's main maps it
      write_run_summary(s->summary_json, run_summary(s->options.db_path, s->options.run_uid, code, error));
      throw;
    }
    write_run_summary(s->summary_json, run_summary(s->options.db_path, s->options.run_uid, code, error));
    return code;
  };
}

} // namespace kj::cli
