// Implements the evaluation task: build step (skipped when the cache has the source), evaluate step, record.
#include "planning/orchestrator/evaluation_task.hpp"

#include "core/hashing.hpp"
#include "core/verdict.hpp"

#include <charconv>
#include <cstdlib>
#include <fmt/core.h>

using nlohmann::json;

namespace kj::orchestrator {
namespace {

std::string env_value(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::chrono::milliseconds milliseconds(double seconds) {
  return std::chrono::milliseconds(static_cast<long long>(seconds * 1000));
}

results::problem_label label_of(const kb::problem& p) {
  return {p.level, p.number, p.name, p.file_name};
}

results::candidate_label label_of(const adapters::candidate& c) {
  return {c.producer, c.sample, c.path.string()};
}

} // namespace

exec::evaluate_job evaluate_message(const evaluation_context& ctx, const kb::problem& p,
                                    const adapters::candidate& c) {
  exec::evaluate_job job;
  job.device = ctx.device;
  job.problem = {p.path.string(), p.source};
  job.candidate = {c.path.empty() ? "<" + c.producer + " " + p.file_name + ">" : c.path.string(), c.source};
  const judging_settings& j = ctx.judging;
  job.overrides = p.overrides_for(to_string(ctx.device), j.overrides);
  job.protocol = exec::make_protocol(j.protocol, p.kb_version.empty() ? "main" : p.kb_version, j.precision);
  job.protocol.input_rng = j.input_rng;
  if (j.trials > 0 && j.trials != job.protocol.trials) { // no longer the original protocol
    job.protocol.trials = j.trials;
    job.protocol.name += fmt::format("+trials={}", j.trials);
  }
  job.timing = j.timing;
  job.strict = j.strict;
  job.timeout_s = j.timeout_s;
  job.limits = j.limits;
  return job;
}

evaluation_context context_of(const judging_settings& judging, const json& env, device_kind device,
                              const exec::build_cache& builds) {
  return {.judging = judging, .device = device, .env = env, .builds = &builds, .wrapper = {}};
}

std::string candidate_build_key(const evaluation_context& ctx, const std::string& source,
                                const std::map<std::string, std::int64_t>& overrides) {
  std::string arch = env_value("TORCH_CUDA_ARCH_LIST");
  const bool cuda = ctx.device == device_kind::cuda;
  if (arch.empty() && cuda) arch = ctx.env.value("compute_capability", "");
  std::string flags;
  for (const char* f : {"CFLAGS", "CXXFLAGS", "LDFLAGS", "CC", "CXX", "NVCC_FLAGS", "TORCH_NVCC_FLAGS"})
    flags += fmt::format("{}={};", f, env_value(f));
  return exec::build_key({.source = source,
                          .overrides = overrides,
                          .device = to_string(ctx.device),
                          .python = ctx.env.value("python", ""),
                          .torch = ctx.env.value("torch", ""),
                          .torch_cuda = ctx.env.value("torch_cuda", ""),
                          .cuda_arch = arch,
                          .nvcc = cuda ? ctx.env.value("nvcc", "") : "",
                          .cxx = ctx.env.value("cxx", ""),
                          .flags = flags});
}

std::optional<exec::precompiled_header> precompiled_header_for(const json& env, device_kind device,
                                                               const std::filesystem::path& cache_dir) {
  if (device != device_kind::cpu || exec::sandbox_kind() != "bwrap") return std::nullopt;
  json key{{"recipe", 1}};
  for (const char* field : {"python", "torch", "torch_git", "cxx"})
    key[field] = env.value(field, "");
  key["python_paths"] = env.value("python_paths", json::array()); // torch's headers lie there
  for (const char* f : {"CC", "CXX", "CFLAGS", "CXXFLAGS"})
    key[f] = env_value(f);
  return exec::precompiled_header(exec::precompiled_header_root(cache_dir),
                                  core::sha256_hex(key.dump()).substr(0, 16));
}

std::size_t pch_min_builds(const std::string& setting) {
  constexpr std::size_t fallback = 6;
  if (setting.empty()) return fallback;
  std::size_t value = 0;
  const char* end = setting.data() + setting.size();
  const auto [at, error] = std::from_chars(setting.data(), end, value); // digits only: no sign, no space
  if (error == std::errc() && at == end && value >= 1) return value;
  fmt::print(stderr, "kj: KJ_PCH_MIN_BUILDS=\"{}\" is not a whole number of builds of at least 1; using {}\n",
             setting, fallback);
  return fallback;
}

void prepare_precompiled_header(const exec::precompiled_header& pch, const exec::job_runner& runner,
                                std::size_t compiles) {
  if (compiles == 0 || compiles < pch_min_builds(env_value("KJ_PCH_MIN_BUILDS")) || pch.ready()) return;
  fmt::print(stderr, "kj: precompiling torch/extension.h for this stack's CPU builds, once ({})...\n",
             pch.folder().string());
  std::string why;
  try {
    why = pch.make(runner);
  } catch (const std::exception& e) { // kj's own speed-up: never a reason to stop the run
    why = e.what();
  }
  if (!why.empty())
    fmt::print(stderr, "kj: no precompiled header: {}; builds read torch's headers as before\n",
               why.substr(0, 600));
}

void offer_precompiled_header(const std::optional<exec::precompiled_header>& pch, exec::launch_spec& launch) {
  if (!pch || !pch->ready() || !launch.sandbox) return;
  // gcc finds torch/extension.h.gch there before torch's header; read-only: every build's, none's to write
  launch.environment["CPATH"] = pch->folder().string();
  launch.sandbox->read_only.push_back(pch->folder());
}

exec::launch_spec build_launch(const evaluation_context& ctx, const std::string& name) {
  // The build runs the candidate's module code: sandboxed, at a lower priority, and standing still while a
  // device slot times (engine/exec/quiet_builds.hpp).
  exec::launch_spec launch{.name = name, .timeout = milliseconds(ctx.judging.build_timeout_s)};
  launch.sandbox = exec::sandbox_policy{};
  for (const auto& path : ctx.env.value("python_paths", std::vector<std::string>{}))
    launch.sandbox->read_only.emplace_back(path);
  launch.nice = 10;
  launch.quiet_while_timing = true;
  offer_precompiled_header(ctx.pch, launch);
  if (ctx.device == device_kind::cuda) { // one compiler at a time per build: nvcc's files are many
    if (const char* jobs = std::getenv("MAX_JOBS"); !jobs || !*jobs) launch.environment["MAX_JOBS"] = "1";
  }
  return launch;
}

namespace {

// Whether the runner could not load a build (an extension missing or unloadable): a cached build then gets
// one fresh build before the verdict is the candidate's.
bool load_failed(const exec::worker_outcome& outcome) {
  const json* event = exec::find_event(outcome, "verdict");
  if (!event) return false;
  const auto v = kj::parse_verdict(event->value("verdict", "")); // the worker's name, typed where it enters
  return v == verdict::load_error ||
         (v == verdict::compile_error && event->value("phase", "") == "load_candidate");
}

} // namespace

scheduler::task evaluation_task(const evaluation_context& ctx, const kb::problem& p,
                                const adapters::candidate& c, db::evaluation_record record,
                                std::function<void(results::evaluation_result&)> on_result, bool rebuilt) {
  auto job = std::make_shared<exec::evaluate_job>(evaluate_message(ctx, p, c));
  auto result = std::make_shared<results::evaluation_result>();
  result->problem = label_of(p);
  result->candidate = label_of(c);
  auto pristine = std::make_shared<db::evaluation_record>(record); // for a rebuild's second attempt
  result->record = std::move(record);
  auto applied = std::make_shared<json>(json::object());
  const std::string name = fmt::format("L{}-{}-s{}", p.level, p.number, c.sample);

  scheduler::task task;
  task.name = name;
  task.label = fmt::format("L{} {}_{} {} s{}", p.level, p.number, p.name, c.producer, c.sample);
  if (ctx.builds && scheduler::needs_build(c.source)) {
    const std::string key = candidate_build_key(ctx, c.source, job->overrides);
    result->record.build_key = key;
    if (auto cached = ctx.builds->lookup(key)) {
      result->build = *cached; // re-judging an unchanged source never compiles it again
      ++task.reused_builds;
    } else {
      task.builds.push_back({exec::build_job{job->problem, job->candidate, job->overrides, job->device},
                             build_launch(ctx, "build-" + name), key});
    }
  }
  task.plan_device =
      [=, &ctx](const std::vector<scheduler::build_done>& builds) -> std::optional<scheduler::device_step> {
    if (!builds.empty()) result->build = builds.front().record;
    result->record.started_at = core::now_iso8601();
    const bool deferred = result->build && result->build->end == exec::build_end::deferred;
    if (result->build && result->build->end != exec::build_end::ok && !deferred) return std::nullopt;
    exec::evaluate_job device_job = *job;
    device_job.import_on_device = deferred;
    if (deferred) device_job.timeout_s += ctx.judging.build_timeout_s; // its compile runs in this job now
    // --timeout is the candidate's; kj's own work beside it (the reference, the checks of its outputs) is
    // not counted against it, and has a bound of its own (a kj that hangs is kj's failure). The judge ends a
    // candidate at its limit itself; the worker is killed only 5 s after that.
    exec::launch_spec launch{.name = name,
                             .timeout = milliseconds(device_job.timeout_s) + std::chrono::seconds(5),
                             .own_limit =
                                 std::max(milliseconds(600'000), 2 * milliseconds(device_job.timeout_s)),
                             .wrapper = ctx.wrapper};
    if (result->build) launch.build_dir = ctx.builds->dir(result->build->key);
    scheduler::device_step step{device_job, launch, [applied](const json& e) {
                                  if (e.contains("applied_overrides")) *applied = e["applied_overrides"];
                                }};
    // A profiler starts a judge of its own for the evaluation it profiles.
    step.warm = ctx.warm_judges && ctx.wrapper.empty();
    return step;
  };
  task.finish = [=, &ctx](const std::vector<scheduler::build_done>&,
                          const scheduler::device_done* device) -> std::vector<scheduler::task> {
    if (device && !rebuilt && result->build && result->build->cached &&
        load_failed(device->outcome)) { // a poisoned or damaged cache is never the candidate's load_error
      ctx.builds->forget(result->build->key);
      return {evaluation_task(ctx, p, c, *pristine, on_result, true)};
    }
    if (device) { // the evaluation's own bounds: from its worker's start (not from when it was planned)
      result->record.started_at = core::iso8601_of(
          std::chrono::system_clock::now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                 std::chrono::duration<double>(device->outcome.wall_s)));
      fill_evaluation(device->outcome, device->log_tail, result->record, ctx.judging.trace);
      result->record.overrides_json = applied->dump();
      result->slot = device->slot;
    } else {
      fill_from_build(result->record, *result->build);
    }
    if (!ctx.judging.strict) without_strict(result->record);
    result->record.finished_at = core::now_iso8601();
    on_result(*result);
    return {};
  };
  return task;
}

} // namespace kj::orchestrator
