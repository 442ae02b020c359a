// The baselines planner: cache lookup, then one scheduler task per batch of problems (compile steps on the
// build pool, one timing job on a device slot), the rows handed to the sinks.
#include "core/hashing.hpp"
#include "core/verdict.hpp"
#include "planning/baselines/baselines.hpp"
#include "planning/orchestrator/judgement.hpp"

#include <fmt/core.h>

using nlohmann::json;

namespace kj::baselines {
namespace {

// Problems one timing worker takes in turn (the worker's start, torch's import and the draw are paid once).
constexpr std::size_t problems_per_worker = 8;

struct target {
  const kb::problem* problem = nullptr;
  std::int64_t problem_id = 0;
  std::string mode;
  json key;
  std::string cache_key;
  exec::source_file file;
  std::map<std::string, std::int64_t> overrides;
  exec::protocol_spec protocol;
  std::optional<double> cold_compile_s;
};

struct context {
  const stack_ref& stack;
  const options& opts;
  results::result_sink& sink;
  std::vector<result>& results;
};

std::string label(const target& t) {
  return fmt::format("baseline-L{}-{}-{}", t.problem->level, t.problem->number, t.mode);
}

target make_target(const problem_ref& ref, const std::string& mode, const stack_ref& stack,
                   const options& opts) {
  const kb::problem& p = *ref.problem;
  target t{.problem = ref.problem, .problem_id = ref.problem_id, .mode = mode};
  t.file = {p.path.string(), p.source};
  t.overrides = p.overrides_for(to_string(opts.device), opts.overrides);
  t.protocol =
      exec::make_protocol(opts.protocol, p.kb_version.empty() ? "main" : p.kb_version, opts.precision);
  t.key = key_json({.problem_source_hash = core::sha256_hex(p.source),
                    .overrides = t.overrides,
                    .precision = opts.precision,
                    .mode = mode,
                    .device = to_string(opts.device),
                    .seed = t.protocol.seed,
                    .eval_mode = t.protocol.eval_mode,
                    .timing = opts.timing,
                    .stack_hash = stack.hash});
  t.cache_key = cache_key(t.key);
  return t;
}

exec::baseline_job job_for(const std::vector<const target*>& targets, const options& opts,
                           bool compile_only) {
  exec::baseline_job job;
  job.device = opts.device;
  job.overrides = targets.front()->overrides;
  job.protocol = targets.front()->protocol;
  job.timing = opts.timing;
  job.timing.enabled = true;
  job.compile_only = compile_only;
  for (const target* t : targets) {
    if (job.items.empty() || job.items.back().problem.path != t->file.path)
      job.items.push_back({t->file, {}});
    job.items.back().modes.push_back(t->mode);
  }
  return job;
}

// The row of `t` from the events of the worker that ran it (with other modes and problems): the mode's
// timing, its "baseline" event (status, compile time, compiled-vs-eager check), else the failure that stopped
// the worker. `first_missing` tells the mode a worker died in from the ones it never reached.
db::baseline_record record_of(const target& t, const context& c, const exec::worker_outcome& outcome,
                              const std::string& log_tail, bool first_missing, std::size_t item) {
  db::baseline_record r{.cache_key = t.cache_key,
                        .key_json = t.key.dump(),
                        .origin = "measured",
                        .problem_id = t.problem_id,
                        .stack_id = c.stack.id,
                        .level = t.problem->level,
                        .file_name = t.problem->file_name,
                        .mode = t.mode,
                        .device = to_string(c.opts.device),
                        .precision = c.opts.precision,
                        .overrides_json = json(t.overrides).dump(),
                        .hardware = c.stack.hardware};
  json params = json::object();
  const json *done = nullptr, *verdict = nullptr, *failed = nullptr;
  for (const auto& e : outcome.events) {
    const std::string type = e.value("type", "");
    if (type == "verdict") verdict = &e;
    if (e.value("problem", std::size_t{0}) != item) continue; // another problem of the batch
    if (type == "problem_failed") failed = &e;
    if (type == "timing" && e.value("subject", "") == t.mode) {
      db::timing_record timing = orchestrator::timing_from_event(e);
      r.method = timing.method;
      r.clock = timing.clock;
      params = json::parse(timing.params_json);
      r.samples_ms = std::move(timing.samples_ms);
      if (!r.samples_ms.empty()) {
        r.median_ms = timing.median_ms;
        r.mean_ms = timing.mean_ms;
        r.min_ms = timing.min_ms;
        r.max_ms = timing.max_ms;
        r.stdev_ms = timing.stdev_ms;
      }
    }
    if (type == "baseline" && e.value("mode", "") == t.mode) done = &e;
  }
  if (done) {
    r.status = done->value("status", "crashed");
    r.error = done->value("error", "");
    if (t.mode != "eager" && done->contains("compile_s")) r.warm_compile_s = done->value("compile_s", 0.0);
    // Recorded, not judged: compiled convolutions and deep networks differ from eager by more than 1e-4,
    // and a reference with dropout differs from itself.
    const json check = done->value("check", json::object());
    if (!check.empty()) params["matches_eager"] = check;
  } else if (failed) { // what stopped every mode of the problem: loading it, drawing its inputs
    r.status = failed->value("status", "crashed");
    r.error = failed->value("error", "");
  } else if (verdict && verdict->value("verdict", "") != "ok" && !outcome.timed_out) {
    r.status = verdict->value("verdict", "crashed"); // the worker itself could not start
    r.error = verdict->value("error", "");
  } else if (!first_missing) {
    r.status = "not_run";
    r.error = fmt::format("the worker {} before this mode started", exec::describe_exit(outcome));
  } else {
    r.status = outcome.timed_out ? "timeout" : "crashed";
    r.error = fmt::format("worker {} without reporting a result", exec::describe_exit(outcome));
    if (!log_tail.empty()) r.error += "\n--- end of worker output ---\n" + log_tail;
  }
  r.compile_s = t.cold_compile_s ? t.cold_compile_s : r.warm_compile_s;
  params["timeout_s"] = c.opts.timeout_s;
  r.params_json = params.dump();
  return r;
}

// Statuses of the compile step that the timing job would only repeat (an oom or a crash may come from running
// in parallel, and is tried again alone).
bool final_in_compile_pass(const std::string& status) {
  const auto v = kj::parse_verdict(status); // a baseline's status is a verdict's name, or ok / not_run
  return v == verdict::compile_error || v == verdict::problem_error || v == verdict::needs_weights ||
         v == verdict::runtime_error || v == verdict::timeout;
}

void emit(const context& c, const target& t, db::baseline_record r, bool cached) {
  results::baseline_result out{{t.problem->level, t.problem->number, t.problem->name, t.problem->file_name},
                               t.mode,
                               std::move(r),
                               cached};
  c.sink.baseline(out);
  c.results.push_back({t.problem, t.mode, std::move(out.record), cached});
}

// One batch: compile steps for its compiled modes (skipped for a re-queued batch), then one timing job of
// every target still pending. Targets a dead worker never reached come back as a follow-up task.
scheduler::task batch_task(std::shared_ptr<std::vector<target>> batch, const context& c, bool compile) {
  const std::chrono::milliseconds per_target(static_cast<long long>(c.opts.timeout_s * 1000));
  scheduler::task task;
  task.name = label(batch->front());
  auto timed = std::make_shared<std::vector<const target*>>();
  if (compile)
    for (const auto& t : *batch)
      if (t.mode != "eager")
        task.builds.push_back({job_for({&t}, c.opts, true), {.name = label(t), .timeout = per_target}, ""});
  task.plan_device =
      [batch, timed, c, per_target,
       compile](const std::vector<scheduler::build_done>& builds) -> std::optional<scheduler::device_step> {
    std::size_t b = 0;
    for (auto& t : *batch) {
      if (compile && t.mode != "eager") {
        const auto& done = builds[b++];
        db::baseline_record r = record_of(t, c, done.outcome, done.log_tail, true, 0);
        if (r.status == "ok") {
          t.cold_compile_s = r.warm_compile_s; // the compile worker's time: the cold compile
        } else if (final_in_compile_pass(r.status)) {
          r.warm_compile_s.reset();
          emit(c, t, std::move(r), false);
          continue;
        }
      }
      timed->push_back(&t);
    }
    if (timed->empty()) return std::nullopt;
    exec::launch_spec launch{.name = label(*timed->front()),
                             .timeout = per_target * static_cast<long long>(timed->size())};
    return scheduler::device_step{job_for(*timed, c.opts, false), launch, {}};
  };
  task.finish = [batch, timed, c](const std::vector<scheduler::build_done>&,
                                  const scheduler::device_done* device) -> std::vector<scheduler::task> {
    if (!device) return {};
    bool first_missing = true;
    auto again = std::make_shared<std::vector<target>>();
    std::size_t item = 0;
    for (std::size_t i = 0; i < timed->size(); ++i) {
      const target& t = *(*timed)[i];
      if (i > 0 && (*timed)[i - 1]->problem != t.problem) ++item;
      db::baseline_record r = record_of(t, c, device->outcome, device->log_tail, first_missing, item);
      if (r.status == "not_run") {
        again->push_back(t);
        continue;
      }
      if (const auto v = kj::parse_verdict(r.status); v == verdict::timeout || v == verdict::crashed)
        first_missing = false;
      emit(c, t, std::move(r), false);
    }
    if (again->empty()) return {};
    return {batch_task(again, c, false)};
  };
  return task;
}

} // namespace

std::vector<result> ensure(db::store& store, const scheduler::scheduler& runner,
                           const std::vector<problem_ref>& problems, const stack_ref& stack,
                           const options& opts, results::result_sink& sink) {
  std::vector<result> results;
  const context c{stack, opts, sink, results};
  std::vector<target> pending;
  for (const auto& ref : problems)
    for (const auto& mode : opts.modes) {
      target t = make_target(ref, mode, stack, opts);
      std::optional<db::baseline_record> cached;
      if (!opts.refresh) cached = store.find_baseline(t.cache_key);
      if (cached && usable(*cached, opts.timeout_s))
        emit(c, t, std::move(*cached), true);
      else if (opts.measure_missing)
        pending.push_back(std::move(t));
    }
  // Batches of up to `problems_per_worker` problems with the same sizes, in order.
  std::vector<scheduler::task> tasks;
  std::shared_ptr<std::vector<target>> batch;
  std::size_t batch_problems = 0;
  for (auto& t : pending) {
    const bool new_problem = !batch || batch->back().problem != t.problem;
    if (!batch ||
        (new_problem && (batch_problems == problems_per_worker || batch->back().overrides != t.overrides))) {
      if (batch) tasks.push_back(batch_task(batch, c, true));
      batch = std::make_shared<std::vector<target>>();
      batch_problems = 0;
    }
    batch_problems += new_problem;
    batch->push_back(std::move(t));
  }
  if (batch) tasks.push_back(batch_task(batch, c, true));
  std::size_t compiles = 0;
  for (const auto& t : tasks)
    compiles += t.builds.size();
  if (compiles) fmt::print(stderr, "kj: compiling {} baselines before timing them...\n", compiles);
  runner.run(std::move(tasks));
  return results;
}

options options_for(const orchestrator::judging_settings& judging, device_kind device) {
  options o;
  o.device = device;
  o.protocol = judging.protocol;
  o.precision = judging.precision;
  o.timing = judging.timing;
  o.overrides = judging.overrides;
  o.timeout_s = judging.timeout_s;
  return o;
}

} // namespace kj::baselines
