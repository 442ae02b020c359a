// Measuring baselines: cache lookup, the parallel compile pass, the serial timing pass, the DB rows.
#include "baselines/baselines.hpp"
#include "harness/orchestrator/build_pool.hpp"
#include "harness/orchestrator/outcome.hpp"

#include <deque>
#include <fmt/core.h>

using nlohmann::json;

namespace kj::baselines {
namespace {

// Problems one timing worker takes in turn (it restarts for the next batch).
constexpr std::size_t problems_per_worker = 8;

struct target {
  const kb::problem* problem = nullptr;
  std::int64_t problem_id = 0;
  std::string mode;
  json key;
  std::string cache_key;
  job_spec job;
  std::string name;
  std::optional<double> cold_compile_s;
};

target make_target(const problem_ref& ref, const std::string& mode, const stack_ref& stack,
                   const options& opts) {
  const kb::problem& p = *ref.problem;
  target t{.problem = ref.problem, .problem_id = ref.problem_id, .mode = mode};
  t.job.mode = "baseline";
  t.job.baseline_modes = {mode};
  t.job.device = opts.device;
  t.job.problem = {p.path.string(), p.source};
  t.job.overrides = p.overrides_for(opts.device, opts.overrides);
  t.job.protocol = make_protocol(opts.protocol, p.kb_version.empty() ? "main" : p.kb_version, opts.precision);
  t.job.timing = opts.timing;
  t.job.timing.enabled = true;
  t.key = key_json({.problem_source_hash = db::sha256_hex(p.source),
                    .overrides = t.job.overrides,
                    .precision = opts.precision,
                    .mode = mode,
                    .device = opts.device,
                    .seed = t.job.protocol.seed,
                    .eval_mode = t.job.protocol.eval_mode,
                    .timing = opts.timing,
                    .stack_hash = stack.hash});
  t.cache_key = cache_key(t.key);
  t.name = fmt::format("baseline-L{}-{}-{}", p.level, p.number, mode);
  return t;
}

// The row of `t` from the events of the worker that ran it (alone or with other modes of its problem): the
// mode's timing, its "baseline" event (status, compile time, compiled-vs-eager check), else the failure
// that stopped the worker. `first_missing` tells the mode a worker died in from the ones it never reached.
db::baseline_record record_of(const target& t, const stack_ref& stack, const options& opts,
                              const orchestrator::worker_outcome& outcome, const std::string& log_tail,
                              bool first_missing = true, std::size_t problem = 0) {
  db::baseline_record r{.cache_key = t.cache_key,
                        .key_json = t.key.dump(),
                        .origin = "measured",
                        .problem_id = t.problem_id,
                        .stack_id = stack.id,
                        .level = t.problem->level,
                        .file_name = t.problem->file_name,
                        .mode = t.mode,
                        .device = opts.device,
                        .precision = opts.precision,
                        .overrides_json = json(t.job.overrides).dump(),
                        .hardware = stack.hardware};
  json params = json::object();
  const json* done = nullptr;
  const json* verdict = nullptr;
  const json* failed = nullptr;
  for (const auto& e : outcome.events) {
    const std::string type = e.value("type", "");
    if (type == "verdict") verdict = &e;
    if (e.value("problem", std::size_t{0}) != problem) continue; // another problem of the batch
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
    r.error = fmt::format("the worker {} before this mode started", orchestrator::describe_exit(outcome));
  } else {
    r.status = outcome.timed_out ? "timeout" : "crashed";
    r.error = fmt::format("worker {} without reporting a result", orchestrator::describe_exit(outcome));
    if (!log_tail.empty()) r.error += "\n--- end of worker output ---\n" + log_tail;
  }
  r.compile_s = t.cold_compile_s ? t.cold_compile_s : r.warm_compile_s;
  params["timeout_s"] = opts.timeout_s;
  r.params_json = params.dump();
  return r;
}

// Statuses of the compile pass that the timing pass would only repeat (an oom or a crash may come from
// running in parallel, and is tried again alone).
bool final_in_compile_pass(const std::string& status) {
  return status == "compile_error" || status == "problem_error" || status == "needs_weights" ||
         status == "runtime_error" || status == "timeout";
}

} // namespace

std::vector<result> ensure(db::store& store, const orchestrator::job_runner& runner,
                           const std::vector<problem_ref>& problems, const stack_ref& stack,
                           const options& opts, const std::function<void(const result&)>& on_result) {
  std::vector<result> results;
  auto record = [&](const target& t, db::baseline_record r, bool cached) {
    if (!cached) r.id = store.insert_baseline(r);
    results.push_back({t.problem, t.mode, std::move(r), cached});
    if (on_result) on_result(results.back());
  };
  std::vector<target> pending;
  for (const auto& ref : problems)
    for (const auto& mode : opts.modes) {
      target t = make_target(ref, mode, stack, opts);
      std::optional<db::baseline_record> cached;
      if (!opts.refresh) cached = store.find_baseline(t.cache_key);
      if (cached && usable(*cached, opts.timeout_s))
        record(t, std::move(*cached), true);
      else if (opts.measure_missing)
        pending.push_back(std::move(t));
    }

  // Compile pass: every compiled mode at once, in parallel, so that the timing pass finds a warm cache.
  std::vector<orchestrator::build_request> compiles;
  std::vector<std::size_t> compile_of;
  for (std::size_t i = 0; i < pending.size(); ++i)
    if (pending[i].mode != "eager") {
      job_spec job = pending[i].job;
      job.mode = "baseline_compile";
      compiles.push_back({job, pending[i].name});
      compile_of.push_back(i);
    }
  std::vector<bool> done(pending.size(), false);
  if (!compiles.empty()) {
    const int jobs = opts.compile_jobs > 0 ? opts.compile_jobs : orchestrator::default_build_jobs();
    fmt::print(stderr, "kj: compiling {} baselines, {} at a time...\n", compiles.size(), jobs);
    std::vector<db::baseline_record> compiled(compiles.size());
    orchestrator::build_all(runner, compiles, jobs, [&](std::size_t i, const orchestrator::build_outcome& b) {
      compiled[i] = record_of(pending[compile_of[i]], stack, opts, b.outcome, b.log_tail);
      fmt::print(stderr, "  compiled {} ({:.0f} s): {}\n", compiles[i].name, b.outcome.wall_s,
                 compiled[i].status);
    });
    for (std::size_t k = 0; k < compiled.size() && !orchestrator::interrupt_requested(); ++k) {
      target& t = pending[compile_of[k]];
      if (compiled[k].status == "ok") {
        t.cold_compile_s = compiled[k].warm_compile_s; // the compile worker's time: the cold compile
        continue;
      }
      if (!final_in_compile_pass(compiled[k].status)) continue;
      done[compile_of[k]] = true;
      compiled[k].warm_compile_s.reset();
      record(t, std::move(compiled[k]), false);
    }
  }

  // Timing pass: one worker at a time on the device. A worker times up to `problems_per_worker` problems
  // (those with the same modes and overrides, in order), every pending mode of each on one draw of its
  // inputs: the worker's start, torch's import and the draw are paid once. Modes a dead worker never
  // reached are queued again; the one it died in is recorded (timeout, crashed).
  std::deque<std::vector<std::size_t>> queue; // per problem: its pending targets, in mode order
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (done[i]) continue;
    if (queue.empty() || pending[queue.back().front()].problem != pending[i].problem) queue.emplace_back();
    queue.back().push_back(i);
  }
  auto modes_of = [&](const std::vector<std::size_t>& group) {
    std::vector<std::string> modes;
    for (std::size_t g : group)
      modes.push_back(pending[g].mode);
    return modes;
  };
  while (!queue.empty() && !orchestrator::interrupt_requested()) {
    std::vector<std::vector<std::size_t>> batch{queue.front()};
    queue.pop_front();
    job_spec job = pending[batch[0].front()].job;
    job.baseline_modes = modes_of(batch[0]);
    job.problems = {job.problem};
    while (batch.size() < problems_per_worker && !queue.empty() &&
           modes_of(queue.front()) == job.baseline_modes &&
           pending[queue.front().front()].job.overrides == job.overrides) {
      batch.push_back(queue.front());
      queue.pop_front();
      job.problems.push_back(pending[batch.back().front()].job.problem);
    }
    orchestrator::job_runner scaled = runner; // the per-worker limit for each (problem, mode)
    scaled.timeout *= static_cast<long long>(batch.size() * job.baseline_modes.size());
    const kb::problem& p = *pending[batch[0].front()].problem;
    std::string tail;
    const auto outcome = scaled.run(job, fmt::format("baseline-L{}-{}", p.level, p.number), &tail);
    if (outcome.interrupted) break;
    bool first_missing = true;
    std::vector<std::vector<std::size_t>> again;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      std::vector<std::size_t> unreached;
      for (std::size_t g : batch[k]) {
        db::baseline_record r = record_of(pending[g], stack, opts, outcome, tail, first_missing, k);
        if (r.status == "not_run") {
          unreached.push_back(g);
          continue;
        }
        if (r.status == "timeout" || r.status == "crashed") first_missing = false;
        record(pending[g], std::move(r), false);
      }
      if (!unreached.empty()) again.push_back(std::move(unreached));
    }
    queue.insert(queue.begin(), again.begin(), again.end());
  }
  return results;
}

} // namespace kj::baselines
