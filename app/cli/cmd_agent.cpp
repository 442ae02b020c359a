// `kj agent`: the built-in agent (a ReAct loop with compile, verify and profile tools) writes candidates for
// the selected problems through any LLM adapter; every turn, tool call, verdict and cost goes to the DB.
#include "agent/planner.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/generation_flags.hpp"
#include "app/cli/judging_flags.hpp"

#include <fstream>
#include <memory>
#include <sstream>

namespace kj::cli {
namespace {

struct agent_state {
  agent::agent_options options;
  source_flags sources;
  generation_flags generation;
  std::string cache_dir, workspaces, hardware, skill;
  double max_seconds = 0, max_usd = 0, bandwidth = 0, tflops = 0;
  std::int64_t max_tokens = 0;
  bool no_provider_editing = false;
  CLI::Option *max_seconds_option = nullptr, *max_usd_option = nullptr, *max_tokens_option = nullptr,
              *bandwidth_option = nullptr, *tflops_option = nullptr;
};

void add_budget_options(CLI::App& cmd, agent_state& s) {
  agent::agent_options& o = s.options;
  cmd.add_option("--attempts", o.attempts, "independent trajectories per problem (each a candidate sample)")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd.add_option("--parallel", o.parallel,
                 "trajectories at once (their model calls overlap; device jobs still take turns per device)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd.add_option("--max-turns", o.limits.max_turns, "calls to the model per trajectory")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  s.max_tokens_option =
      cmd.add_option("--max-trajectory-tokens", s.max_tokens,
                     "tokens per trajectory (input, cached and output, summed over its calls)")
          ->check(CLI::PositiveNumber);
  s.max_seconds_option =
      cmd.add_option("--max-trajectory-seconds", s.max_seconds, "wall time per trajectory, tools included")
          ->check(CLI::PositiveNumber);
  s.max_usd_option =
      cmd.add_option("--max-trajectory-usd", s.max_usd, "dollars per trajectory (needs a price)")
          ->check(CLI::NonNegativeNumber);
  cmd.add_option("--context-tokens", o.context.window_tokens,
                 "the model's context window: old tool outputs are elided from 60% of it, old turns dropped "
                 "from 85%")
      ->check(CLI::Range(std::int64_t{4000}, std::int64_t{10'000'000}))
      ->capture_default_str();
  cmd.add_flag("--no-provider-context-editing", s.no_provider_editing,
               "do not ask the provider to clear old tool results (Anthropic's context editing)");
}

void add_engine_options(CLI::App& cmd, agent_state& s) {
  agent::agent_options& o = s.options;
  add_judging_options(cmd, o.judging, "wall-clock limit in seconds of one verify or profile job");
  cmd.add_option(
         "--baselines", o.baselines,
         "compiled baselines the profile tool shows and speedups are judged against: cached, none, or "
         "modes to measure first, e.g. compile-default")
      ->capture_default_str();
  cmd.add_option("--ncu", o.ncu, "Nsight Compute on a GPU: auto (ncu on PATH), off, or its path")
      ->capture_default_str();
  s.bandwidth_option = cmd.add_option("--peak-bandwidth-gbs", s.bandwidth,
                                      "memory bandwidth for the speed-of-light estimate [GB/s] (default: the "
                                      "GPU's datasheet value, the CPU's measured copy bandwidth)")
                           ->check(CLI::PositiveNumber);
  s.tflops_option = cmd.add_option("--peak-tflops", s.tflops, "peak FLOP rate for the estimate [TFLOP/s]")
                        ->check(CLI::PositiveNumber);
  cmd.add_option("--hardware", s.hardware, "a hardware table in agent/hardware.json's format");
  cmd.add_option("--skill", s.skill, "a skill document to use instead of the built-in agent/skill/SKILL.md");
}

std::string read_option_file(const std::string& path, const char* option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw usage_error(std::string(option) + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

action add_agent_command(CLI::App& app, int argc, char** argv) {
  auto* cmd = app.add_subcommand(
      "agent",
      "The built-in agent: a ReAct loop (write, compile, verify, profile, submit) per problem through "
      "an LLM adapter; transcripts, verdicts and costs go to the SQLite DB");
  auto s = std::make_shared<agent_state>();
  s->options.db_path = default_db_path();
  cmd->add_option("--db", s->options.db_path, "SQLite file to write (created if missing)")
      ->capture_default_str();
  cmd->add_option("--device", s->options.device, "auto, cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option(
         "--gpus", s->options.gpus,
         "CUDA: the GPUs the tools judge on, e.g. 0,1: one device slot each, shared by the trajectories "
         "(default: every GPU torch sees; numbered as torch numbers them under kj's own "
         "CUDA_VISIBLE_DEVICES, if set)")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  s->sources.add_to(*cmd);
  s->generation.add_to(*cmd, generation_use::agent);
  add_budget_options(*cmd, *s);
  add_engine_options(*cmd, *s);
  cmd->add_option("--run-id", s->options.run_uid, "name of the run; an existing run is resumed")
      ->check(run_id());
  cmd->add_option("--cache-dir", s->cache_dir, "build cache and scratch folder (default: $KJ_CACHE_DIR)");
  cmd->add_option("--workspaces", s->workspaces,
                  "where the trajectories' workspaces go (default: <cache>/agent)");
  return [s, argc, argv] {
    check_python_override();
    agent::agent_options& o = s->options;
    for (int i = 0; i < argc; ++i)
      o.command_line += (i ? " " : "") + std::string(argv[i]);
    o.generation = s->generation.resolve();
    if (o.device == "cpu" && !o.gpus.empty())
      throw usage_error("--gpus with --device cpu: --gpus picks CUDA devices");
    o.limits.run_usd = o.generation.budget_usd;
    if (s->max_tokens_option->count()) o.limits.max_tokens = s->max_tokens;
    if (s->max_seconds_option->count()) o.limits.max_seconds = s->max_seconds;
    if (s->max_usd_option->count()) o.limits.max_usd = s->max_usd;
    if (s->bandwidth_option->count()) o.peaks.bandwidth_gbs = s->bandwidth;
    if (s->tflops_option->count()) o.peaks.tflops = s->tflops;
    if (!s->hardware.empty()) {
      o.peaks.table_text = read_option_file(s->hardware, "--hardware");
      o.peaks.table_name = s->hardware;
    }
    o.context.provider_editing = !s->no_provider_editing;
    o.sources = s->sources.resolve();
    o.sources.precision = o.judging.precision; // --problems verified: the run's precision
    o.judging.overrides = s->sources.overrides();
    o.cache_dir = s->cache_dir;
    o.workspaces = s->workspaces;
    o.skill = s->skill;
    return agent::execute_agent(o);
  };
}

} // namespace kj::cli
