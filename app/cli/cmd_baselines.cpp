// `kj baselines`: measure (or reuse from the cache) eager and torch.compile baselines for a whole problem
// source, or import KernelBench's published baseline JSONs.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "core/version.hpp"
#include "engine/exec/process.hpp"
#include "planning/baselines/baselines.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/orchestrator/shard.hpp"
#include "planning/results/sinks.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

namespace kj::cli {
namespace {

struct baselines_state {
  baselines::options options;
  source_flags sources;
  std::string db_path = default_db_path();
  std::string device = "auto";
  std::string modes = "default";
  std::string cache_dir;
  std::string import_path;
  std::string hardware;
  bool keep_scratch = false;
  int compile_jobs = 0; // parallel compile workers; 0: one per core, at most 8
  std::string shard;    // "i/N": only the problems of that shard
};

// Prints each baseline as the scheduler finishes it.
class console_sink final : public results::result_sink {
public:
  explicit console_sink(std::vector<db::baseline_record> imported) : m_imported(std::move(imported)) {}
  void baseline(results::baseline_result& r) override;

private:
  std::vector<db::baseline_record> m_imported;
};

std::string ms_text(const std::optional<double>& ms) {
  return ms ? fmt::format("{:.4g}", *ms) : "-";
}

// Per mode: how many were ok, failed (by status) and cached, and the compile times of the measured ones.
void print_summary(const std::vector<baselines::result>& results, double wall_s) {
  struct tally {
    int ok = 0, cached = 0;
    std::map<std::string, int> failed;
    std::vector<double> compile_s;
  };
  std::map<std::string, tally> modes;
  for (const auto& r : results) {
    tally& t = modes[r.mode];
    r.record.status == "ok" ? ++t.ok : ++t.failed[r.record.status];
    if (r.cached) ++t.cached;
    if (r.record.compile_s && r.mode != "eager") t.compile_s.push_back(*r.record.compile_s);
  }
  fmt::print("\n{:<28} {:>5} {:>7} {:>7} {:>12} {:>12} {:>12}  {}\n", "mode", "ok", "failed", "cached",
             "compile sum", "compile med", "compile max", "failures");
  for (const auto& mode : baselines::all_modes) {
    auto it = modes.find(mode);
    if (it == modes.end()) continue;
    tally& t = it->second;
    std::sort(t.compile_s.begin(), t.compile_s.end());
    double sum = 0;
    for (double c : t.compile_s)
      sum += c;
    std::string failures;
    int failed = 0;
    for (const auto& [status, n] : t.failed) {
      failures += fmt::format("{}{} {}", failures.empty() ? "" : ", ", n, status);
      failed += n;
    }
    const bool any = !t.compile_s.empty();
    fmt::print("{:<28} {:>5} {:>7} {:>7} {:>12} {:>12} {:>12}  {}\n", mode, t.ok, failed, t.cached,
               any ? fmt::format("{:.0f} s", sum) : "-",
               any ? fmt::format("{:.1f} s", t.compile_s[t.compile_s.size() / 2]) : "-",
               any ? fmt::format("{:.1f} s", t.compile_s.back()) : "-", failures);
  }
  fmt::print("total wall time: {:.1f} s\n", wall_s);
}

// One line per baseline as it is known, with KernelBench's imported number for the same problem and mode
// (when imported) beside it.
void console_sink::baseline(results::baseline_result& r) {
  std::string theirs;
  for (const auto& i : m_imported)
    if (i.level == r.problem.level && i.file_name == r.problem.file_name && i.mode == r.mode)
      theirs += fmt::format("{}{} {} ms", theirs.empty() ? "  [" : ", ", i.hardware, ms_text(i.mean_ms));
  if (!theirs.empty()) theirs += "]";
  const auto& b = r.record;
  std::string what = b.status == "ok" ? fmt::format("{} ms ({})", ms_text(b.headline_ms()),
                                                    b.headline_ms() == b.mean_ms ? "mean" : "median")
                                      : b.status;
  if (b.compile_s && r.mode != "eager") what += fmt::format(", compile {:.1f} s", *b.compile_s);
  if (const auto check =
          nlohmann::json::parse(b.params_json).value("matches_eager", nlohmann::json::object());
      !check.empty() && !check.value("passed", true))
    what += fmt::format(", differs from {} (max abs err {:.3g})", r.mode == "eager" ? "itself" : "eager",
                        check.value("max_abs_err", 0.0));
  fmt::print("L{} {:<44} {:<27} {}{}{}\n", r.problem.level, r.problem.file_name, r.mode, what,
             r.cached ? " (cached)" : "", theirs);
  if (b.status != "ok" && !r.cached) {
    const std::string first_line = b.error.substr(0, b.error.find('\n'));
    fmt::print("    {}\n", first_line.substr(0, 200));
  }
}

int import_json(const baselines_state& s) {
  db::store store = db::store::open(s.db_path);
  const auto summary = baselines::import_kernelbench_json(store, s.import_path, s.hardware);
  fmt::print("imported {} rows from {} files ({} already there, {} matched to problems in {})\n",
             summary.imported, summary.files, summary.skipped, summary.matched_problems, s.db_path);
  return 0;
}

int measure(baselines_state& s) {
  const auto start = std::chrono::steady_clock::now();
  const orchestrator::shard part =
      s.shard.empty() ? orchestrator::shard{} : orchestrator::parse_shard(s.shard);
  const auto problems =
      orchestrator::load_all_problems(s.sources.resolve(), exec::cache_dir_or_default(s.cache_dir));
  s.options.overrides = s.sources.overrides_for(problems);
  s.options.modes = baselines::parse_modes(s.modes);
  db::store store = db::store::open(s.db_path);
  const std::filesystem::path cache_dir = exec::cache_dir_or_default(s.cache_dir);
  check_python_override();
  orchestrator::check_cache_dir(cache_dir);
  fmt::print(stderr, "kj: starting a worker to probe Python, torch and the device...\n");
  const auto env = orchestrator::probe_environment(cache_dir);
  s.options.device = orchestrator::resolve_device(s.device, env);
  orchestrator::check_precision_device(s.options.precision, s.options.device);
  const db::stack_record stack = orchestrator::stack_from(env, s.options.device);
  const baselines::stack_ref stack_ref{store.upsert_stack(stack), stack.stack_hash, stack.device_name};
  const auto ids = orchestrator::record_problems(store, problems);
  // A shard holds whole problems (every mode of one problem), keyed by the problem's identity.
  std::vector<baselines::problem_ref> refs;
  for (std::size_t i = 0; i < problems.size(); ++i)
    if (part.holds(orchestrator::problem_identity(problems[i]))) refs.push_back({&problems[i], ids[i]});
  if (part.partial())
    fmt::print(stderr, "kj: shard {}: {} of {} problems\n", part.label(), refs.size(), problems.size());
  fmt::print(stderr, "kj: {} problems x {} modes on {} ({}), stack {}\n", refs.size(), s.options.modes.size(),
             to_string(s.options.device), stack.device_name, stack.stack_hash);

  std::vector<db::baseline_record> imported;
  for (auto& b : store.baselines(stack_ref.id))
    if (b.origin == "imported") imported.push_back(std::move(b));
  exec::install_interrupt_handlers();
  const exec::job_runner runner{cache_dir, s.keep_scratch};
  const exec::build_cache builds(cache_dir / "builds");
  // Every compile first, in parallel; then the timing workers, one per device slot.
  const scheduler::scheduler runs(runner, builds,
                                  {.build_jobs = s.compile_jobs,
                                   .slots = scheduler::device_slots(s.options.device, {0}),
                                   .overlap = false});
  results::db_sink to_db(store);
  console_sink console(std::move(imported));
  results::sink_set sinks({&to_db, &console});
  const auto results = baselines::ensure(store, runs, refs, stack_ref, s.options, sinks);
  print_summary(results, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (exec::interrupt_requested()) {
    fmt::print(stderr, "kj: interrupted; the baselines measured so far are in {}\n", s.db_path);
    return 130;
  }
  return 0;
}

} // namespace

action add_baselines_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "baselines",
      "Measure each problem's eager and torch.compile baselines once per stack (cached in the DB; kj run "
      "compares candidates with them), or import KernelBench's published baseline JSONs");
  auto s = std::make_shared<baselines_state>();
  cmd->add_option("--db", s->db_path, "SQLite file to write (created if missing)")->capture_default_str();
  cmd->add_option("--device", s->device, "auto (cuda when torch sees a GPU, else cpu), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  s->sources.add_to(*cmd);
  cmd->add_option("--modes", s->modes,
                  "comma-separated baseline modes: eager, compile-default, max-autotune, "
                  "max-autotune-no-cudagraphs, reduce-overhead; 'default' is all but reduce-overhead, 'all' "
                  "is every one")
      ->capture_default_str();
  cmd->add_flag("--refresh-baselines", s->options.refresh,
                "measure again even where the cache holds a matching baseline (old rows are kept)");
  cmd->add_option("--jobs", s->compile_jobs,
                  "compile this many baselines at once before timing (default: one per core, at most 8); "
                  "timing always runs one at a time")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout", s->options.timeout_s,
                  "wall-clock limit per baseline worker in seconds (compile included)")
      ->check(seconds())
      ->capture_default_str();
  add_protocol_option(*cmd, s->options.protocol,
                      "whose model construction the baselines follow: kernelbench (train mode) or cuda-agent "
                      "(eval mode); part of the cache key");
  add_precision_option(
      *cmd, s->options.precision,
      "models and floating inputs are cast to this dtype; tf32: fp32 with TF32 matmuls and "
      "convolutions (CUDA only), the baseline kj run compares a candidate that turns TF32 on "
      "with",
      {"fp32", "tf32", "fp16", "bf16"});
  add_timing_options(*cmd, s->options.timing);
  cmd->add_option("--cache-dir", s->cache_dir,
                  "build cache, Inductor cache and scratch folder (default: $KJ_CACHE_DIR or "
                  "~/.cache/kerneljudge)");
  cmd->add_flag("--keep-scratch", s->keep_scratch, "keep each job's scratch folder (job.json, worker.log)");
  cmd->add_option("--import", s->import_path,
                  "instead of measuring: import KernelBench's results/timing JSONs (a file, or a folder "
                  "searched recursively) as external rows marked imported");
  cmd->add_option(
      "--shard", s->shard,
      "measure only shard I of N (e.g. 2/4) of the problems, by a hash of each problem's identity; "
      "kj merge combines the shards' DBs (docs/scaling.md)");
  cmd->add_option("--hardware", s->hardware,
                  "with --import: the hardware label of the rows (default: the JSON's folder name, e.g. "
                  "H100_Modal)");
  return [s] { return s->import_path.empty() ? measure(*s) : import_json(*s); };
}

} // namespace kj::cli
