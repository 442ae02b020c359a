// The judge's evaluation sequence: the reference here, the candidate in its own process (the runner); every
// comparison, verdict and statistic is made here, where the candidate's code never runs.
#include "engine/worker/judge_evaluation.hpp"

#include "engine/exec/sandbox.hpp"
#include "engine/worker/candidate_numerics.hpp"
#include "engine/worker/judge_timing.hpp"
#include "engine/worker/memory_watch.hpp"
#include "engine/worker/problem_alone.hpp"
#include "engine/worker/python_env.hpp"
#include "engine/worker/runner_link.hpp"
#include "engine/worker/support.hpp"
#include "engine/worker/timing_bridge.hpp"

#include <chrono>
#include <cstdlib>
#include <fmt/core.h>
#include <memory>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// The strict verdict's case classes, each reported as it finishes. The candidate's failures are caught inside
// a class; what escapes one is kj's own (a harness_error case), except the problem's own fault, which ends
// the evaluation. A runner that died in a class (a crash on NaN inputs, say) is started again for the next
// one. Returns whether every case passed (or was uninformative). Once the compatible verdict failed
// (`decided`), strict fails with its first failing case: the classes after it are not run, except the free
// "output" summary of the checks already made (each failing case would cost a float64 reference).
bool run_case_classes(const exec::evaluate_job& job, py::module_& runtime, py::object& session,
                      runner_link& runner, result_channel& channel, bool decided) {
  py::object verifier = py::module_::import("kj_verify").attr("Verifier")(session, job.protocol.seed);
  session.attr("verifier") = verifier; // timed outputs are judged by its rule too (kj_judge.check_snapshots)
  verifier.attr("stop_at_failure") = decided;
  bool clean = true, failed = false;
  for (const auto& cls : job.case_classes) {
    if (decided && failed && cls != "output") continue;
    const auto start = std::chrono::steady_clock::now();
    if (!runner.alive() && !runner.restart()) { // its process died and cannot start again: the class fails
      clean = false;
      failed = true;
      channel.emit({{"type", "case"},
                    {"class", cls},
                    {"index", 0},
                    {"status", "fail"},
                    {"message", "the candidate's process died and could not be started again for this "
                                "class: " +
                                    runner.load().value("error", std::string("it did not load"))}});
      break; // strict has failed: the classes after it are not run
    }
    try {
      for (py::handle c : verifier.attr("run_class")(cls)) {
        json event = to_json(c);
        event["type"] = "case";
        const std::string status = event.value("status", "");
        clean = clean && (status == "pass" || status == "uninformative");
        failed = failed || status == "fail";
        channel.emit(event);
      }
    } catch (py::error_already_set& e) {
      if (verdict_of(runtime, e) == "problem_error") throw;
      clean = false;
      channel.emit({{"type", "case"},
                    {"class", cls},
                    {"index", 0},
                    {"status", "harness_error"},
                    {"message", "kj's own code failed in this class: " + python_error_text(runtime, e)}});
    }
    channel.emit(
        {{"type", "class_done"},
         {"class", cls},
         {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}});
  }
  return clean;
}

// Findings the runner can see: backend flags the candidate flipped (TF32, reduced-precision reductions, cuDNN
// modes) and PyTorch ops that compute inside ModelNew.forward (a torch fallback, on every device).
// Returns the candidate's numerics (candidate_numerics).
std::optional<precision> report_findings(const exec::evaluate_job& job, runner_link& runner,
                                         result_channel& channel) {
  const json reply =
      runner.request({{"op", "findings"}, {"recipe", {{"kind", "case"}, {"seed", job.protocol.seed}}}});
  if (!reply.value("ok", false)) return std::nullopt;
  const json flags = reply.value("flags", json::object());
  const json torch_ops = reply.value("torch_ops", json::object());
  for (const auto& [name, change] : flags.items())
    channel.emit({{"type", "finding"},
                  {"kind", "global_flags"},
                  {"excerpt", "torch." + name + ": " + change.get<std::string>()}});
  std::string ops;
  for (const auto& [name, count] : torch_ops.items())
    if (count.is_number_integer())
      ops += fmt::format("{}{} x{}", ops.empty() ? "" : ", ", name.substr(0, 60), count.get<long>());
  if (!ops.empty())
    channel.emit({{"type", "finding"},
                  {"kind", "torch_fallback"},
                  {"excerpt", "ModelNew.forward ran PyTorch ops: " + ops.substr(0, 300)}});
  if (const std::string low = lower_precision(reply.value("dtypes", json::object()), job.protocol.precision);
      !low.empty())
    channel.emit({{"type", "finding"}, {"kind", "lower_precision"}, {"excerpt", low}});
  return candidate_numerics(reply.value("dtypes", json::object()), flags, job.protocol.precision);
}

runner_spec spec_of(const exec::evaluate_job& job, std::shared_ptr<judge_clock> clock) {
  runner_spec spec;
  for (const auto& p : python_sandbox_paths())
    spec.read_only.emplace_back(p);
  spec.device = job.device;
  spec.problem = job.problem;
  spec.candidate = job.candidate;
  spec.overrides = job.overrides;
  spec.protocol = job.protocol;
  spec.import_on_device = job.import_on_device;
  if (!job.extensions_dir.empty()) spec.extensions = job.extensions_dir;
  const char* scratch = std::getenv("KJ_SCRATCH_DIR");
  spec.scratch = std::filesystem::path(scratch && *scratch ? scratch : "/tmp") / "runner";
  spec.limits.memory_bytes = static_cast<std::uint64_t>(job.limits.memory_gib * double(1ull << 30));
  spec.limits.processes = job.limits.processes;
  spec.clock = std::move(clock);
  return spec;
}

// KernelBench's trials; `tolerance_only` stays true while every failure is a value outside the fixed
// tolerance (which the strict verdict judges by its own rule), not a shape, dtype or structure.
void run_trials(const exec::evaluate_job& job, py::object& session, result_channel& channel, bool& all_passed,
                bool& tolerance_only, std::string& first_failure, std::string& first_reason) {
  auto seeds =
      session.attr("trial_seeds")(job.protocol.seed, job.protocol.trials).cast<std::vector<std::uint64_t>>();
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    json trial = to_json(session.attr("run_trial")(seeds[i], job.protocol.atol, job.protocol.rtol));
    trial["type"] = "trial";
    trial["index"] = i;
    trial["seed"] = seeds[i];
    channel.emit(trial);
    if (trial.value("passed", false)) continue;
    tolerance_only = tolerance_only && trial.value("reason", "") == "tolerance";
    if (all_passed) {
      all_passed = false;
      first_failure = fmt::format("trial {} (seed {}): {}", i, seeds[i], trial.value("message", ""));
      first_reason = trial.value("reason", "");
    }
  }
}

} // namespace

void build(const exec::build_job& job, py::module_& runtime, result_channel& channel) {
  try {
    py::object session = py::module_::import("kj_runner").attr("RunnerSession")("cpu", py::dict(), false);
    session.attr("import_candidate")(job.candidate.path, job.candidate.source, job.overrides);
    channel.emit({{"type", "built"}});
  } catch (py::error_already_set& e) {
    // Without the GPU (builds never see it) an import may fail that KernelBench's eval, which imports with
    // the GPU, would judge: on a CUDA run, an import that failed over the device is imported again by the
    // runner, where the device is visible.
    const std::string verdict = verdict_of(runtime, e);
    const std::string text = python_error_text(runtime, e);
    const bool over_the_device =
        text.find("CUDA") != std::string::npos || text.find("cuda") != std::string::npos ||
        text.find("GPU") != std::string::npos || text.find("NVIDIA") != std::string::npos;
    if (job.device == device_kind::cuda && verdict == "load_error" && over_the_device) {
      channel.emit(
          {{"type", "built"},
           {"deferred", "the import failed without the GPU; the runner imports it on the device:\n" + text}});
      return;
    }
    channel.emit({{"type", "verdict"},
                  {"verdict", verdict_of(runtime, e)},
                  {"phase", "build"},
                  {"error", python_error_text(runtime, e)}});
  }
}

namespace {

// The runner could not load the candidate. The problem's own Model is built here first: a problem that cannot
// be built is the problem's error whatever the candidate did (which raises it), and a runner that blames the
// problem when kj builds it fine is not believed (the candidate's process can say anything).
// The problem alone in kj's sandbox (problem_alone.hpp), in a runner started as the job's would be.
json alone(const exec::evaluate_job& job, const json& request, const cuda::plugin* plugin) {
  return problem_alone(job, request, plugin, [](const exec::evaluate_job& j) { return spec_of(j, nullptr); });
}

runner_failure load_failure(const exec::evaluate_job& job, py::module_& runtime, py::object& session,
                            const json& load, const cuda::plugin* plugin, phase_clock& phase) {
  const std::uint64_t seed = job.protocol.seed;
  const std::string kind = load.value("kind", "crashed"), error = load.value("error", "");
  if (load.value("reason", "") != "out_of_memory") {
    phase.enter("build_models");
    try {
      session.attr("build_reference")(seed);
    } catch (py::error_already_set& e) {
      if (verdict_of(runtime, e) == "problem_error") throw;
      if (kind == "problem_error") throw; // kj's own failure here: not the candidate's either
    }
    phase.enter("load_candidate"); // the verdict is the load's (a cached build that fails to load is rebuilt)
  }
  if (kind ==
      "problem_error") // the judge builds the problem's Model outside the sandbox: the control decides
    return blame_at_load(error, alone(job, nullptr, plugin));
  return runner_failure(kind, error, load.value("reason", "")); // out_of_memory while loading stays named
}

// The memory event, from both processes (the runner's own report is informational; its RSS is the
// watchdog's).
void report_memory(py::object& session, runner_link& runner, const device_memory_watch& watch,
                   result_channel& channel) {
  json runner_peaks = json::object();
  if (runner.alive()) {
    const json reply = runner.request({{"op", "memory"}});
    if (reply.value("ok", false)) runner_peaks = reply.value("peaks", json::object());
  }
  const json judge_peaks = to_json(session.attr("memory_peaks")());
  const auto budget = session.attr("memory").attr("budget")().cast<std::uint64_t>();
  channel.emit(memory_event(judge_peaks, runner_peaks, runner.peak_rss(), watch, budget));
}

json verdict_event(const std::string& verdict, const std::string& phase, const std::string& error,
                   const std::string& reason = "") {
  json event{{"type", "verdict"}, {"verdict", verdict}, {"phase", phase}, {"error", error}};
  if (!reason.empty()) event["reason"] = reason;
  return event;
}

} // namespace

std::shared_ptr<judge_clock> start_clock(const exec::evaluate_job& job, result_channel& channel) {
  // The orchestrator kills the whole job 5 s after the candidate's time and kj's own are spent; the judge
  // stops waiting for the candidate before, so that the verdict names the phase.
  return std::make_shared<judge_clock>(
      std::chrono::milliseconds(static_cast<long long>(std::max(0.1, job.timeout_s) * 1000)), &channel);
}

std::unique_ptr<runner_link> launch_runner(const exec::evaluate_job& job,
                                           std::shared_ptr<judge_clock> clock) {
  return std::make_unique<runner_link>(spec_of(job, std::move(clock)));
}

void start_runner_ahead(runner_pool& pool, const exec::evaluate_job& job) {
  pool.start_next(spec_of(job, nullptr));
}

void evaluate(const exec::evaluate_job& job, std::unique_ptr<runner_link> launched,
              const std::shared_ptr<judge_clock>& clock, py::module_& runtime, result_channel& channel,
              runner_pool* pool) {
  const exec::protocol_spec& protocol = job.protocol;
  phase_clock phase(channel);
  phase.enter("load_problem");
  std::string plugin_error;
  const cuda::plugin* plugin = job.device == device_kind::cuda ? shared_cuda_plugin(plugin_error) : nullptr;
  device_memory_watch watch(plugin);
  py::object session;
  std::unique_ptr<runner_link> link;
  const auto memory = [&] { // on every way out: an out-of-memory verdict is when the numbers matter most
    if (!session || !link) return;
    try {
      report_memory(session, *link, watch, channel);
    } catch (const std::exception&) { // the numbers are a report, not a verdict
    }
  };
  try {
    py::module_ judge = py::module_::import("kj_judge");
    session = judge.attr("Session")(py_device(job.device),
                                    py::module_::import("json").attr("loads")(json(protocol).dump()));
    if (pool) // kj's own out-of-memory first gives back the next job's runner (its device context)
      session.attr("memory").attr("make_room") = py::cpp_function([pool] { pool->give_back(); });
    py::object applied = session.attr("load_problem")(job.problem.path, job.problem.source, job.overrides);
    phase.enter("load_candidate",
                {{"applied_overrides", to_json(applied)}}); // the runner: start, sandbox, load
    if (pool) {
      link = pool->connect(spec_of(job, clock), plugin, job.more_jobs);
    } else {
      link = launched ? std::move(launched) : launch_runner(job, clock);
      link->connect(plugin);
    }
    runner_link& runner = *link;
    if (!runner.load().value("ok", false))
      throw load_failure(job, runtime, session, runner.load(), plugin, phase);
    // The next job's runner starts while this one is judged (after a runner that had a PID namespace of its
    // own, connect started it already): only where runners have a PID namespace of their own (without one, a
    // candidate of the same uid could reach it through /proc). Not for the slot's last job: a runner nobody
    // takes only costs the machine a Python start.
    if (pool && job.more_jobs && runner.isolation_note().empty() && exec::sandbox_pid_namespace())
      pool->start_next(spec_of(job, clock));
    session.attr("remote") = judge.attr("RemoteCandidate")(
        py::cpp_function(
            [&runner](const std::string& message) { return runner.request(json::parse(message)).dump(); }),
        py_device(job.device), py::cpp_function([&runner] { runner.release_arena(); }),
        session.attr("memory"), py::cpp_function([&runner](double ms) { runner.allow_next(ms); }),
        session.attr("own_draw_cap"), py::cpp_function([&job, plugin](const std::string& message) {
          return alone(job, json::parse(message), plugin).dump();
        }));

    phase.enter("build_models");
    session.attr("build_reference")(protocol.seed);

    phase.enter("compatible");
    bool all_passed = true, tolerance_only = true, strict_clean = false;
    std::string first_failure, first_reason;
    run_trials(job, session, channel, all_passed, tolerance_only, first_failure, first_reason);
    if (job.strict) {
      phase.enter("strict");
      strict_clean = run_case_classes(job, runtime, session, runner, channel, !all_passed);
    }
    phase.enter("findings");
    if (!runner.alive()) runner.restart();
    const std::optional<precision> numerics = report_findings(job, runner, channel);
    // Rejected only by KernelBench's fixed tolerance while the strict verdict passes: still timed, since the
    // strict verdict calls it correct (the compatible verdict stays incorrect, reason tolerance).
    const bool timed = all_passed || (tolerance_only && strict_clean);
    if (job.timing.enabled && timed) {
      phase.enter("timing");
      watch.pause(true);
      {
        const quiet_host quiet(
            channel); // kj's builds stand still while it times, and so does the next runner
        // The next runner's start never touches the device during a timing (docs/design.md, "Warm judges"):
        // on CUDA a spare still importing Python and torch goes on and starts its device after; the rest
        // waits.
        const runner_pool::frozen spare(pool);
        time_subjects(job, session, runner, channel, phase, numerics);
      }
      watch.pause(false);
    }
    phase.enter("memory");
    memory();
    session.attr("remote") = py::none();
    const std::string last = phase.name();
    phase.close();
    if (!all_passed)
      channel.emit(verdict_event("incorrect", last, first_failure,
                                 tolerance_only                ? "tolerance"
                                 : first_reason == "nonfinite" ? "nonfinite" // NaN or Inf against a number
                                                               : "mismatch"));
    else
      channel.emit(verdict_event("correct", last, ""));
  } catch (const runner_failure& e) {
    memory();
    channel.emit(verdict_event(e.kind, phase.name(), e.what(), e.reason));
  } catch (py::error_already_set& e) {
    const json event = verdict_event(verdict_of(runtime, e), phase.name(), python_error_text(runtime, e),
                                     reason_of(runtime, e));
    memory();
    channel.emit(event);
  } catch (const std::exception& e) { // kj's own C++ failed: never the candidate's verdict
    memory();
    channel.emit(verdict_event("harness_error", phase.name(), e.what()));
  }
}

} // namespace kj::worker
