// The judge's evaluation sequence: the reference here, the candidate in its own process (the runner); every
// comparison, verdict and statistic is made here, where the candidate's code never runs.
#include "harness/worker/evaluate.hpp"

#include "harness/worker/judge_timing.hpp"
#include "harness/worker/runner_link.hpp"
#include "harness/worker/support.hpp"
#include "harness/worker/timing_bridge.hpp"

#include <chrono>
#include <cstdlib>
#include <fmt/core.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// The strict verdict's case classes, each reported as it finishes; a class that raises is one failing case. A
// runner that died in a class (a crash on NaN inputs, say) is started again for the next one.
void run_case_classes(const exec::evaluate_job& job, py::module_& runtime, py::object& session,
                      runner_link& runner, result_channel& channel) {
  py::object verifier = py::module_::import("kj_verify").attr("Verifier")(session, job.protocol.seed);
  for (const auto& cls : job.case_classes) {
    const auto start = std::chrono::steady_clock::now();
    if (!runner.alive() && !runner.restart()) break;
    try {
      for (py::handle c : verifier.attr("run_class")(cls)) {
        json event = to_json(c);
        event["type"] = "case";
        channel.emit(event);
      }
    } catch (py::error_already_set& e) {
      channel.emit({{"type", "case"},
                    {"class", cls},
                    {"index", 0},
                    {"status", "fail"},
                    {"message", "the case raised: " + python_error_text(runtime, e)}});
    }
    channel.emit(
        {{"type", "class_done"},
         {"class", cls},
         {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}});
  }
}

// Findings the runner can see: backend flags the candidate flipped (TF32, reduced-precision reductions, cuDNN
// modes) and PyTorch ops that compute inside ModelNew.forward (a torch fallback, on every device).
void report_findings(const exec::evaluate_job& job, runner_link& runner, result_channel& channel) {
  const json reply =
      runner.request({{"op", "findings"}, {"recipe", {{"kind", "case"}, {"seed", job.protocol.seed}}}});
  if (!reply.value("ok", false)) return;
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
}

runner_spec spec_of(const exec::evaluate_job& job, py::module_& runtime) {
  runner_spec spec;
  for (const auto& p : runtime.attr("sandbox_paths")().cast<std::vector<std::string>>())
    spec.read_only.emplace_back(p);
  spec.device = job.device;
  spec.problem = job.problem;
  spec.candidate = job.candidate;
  spec.overrides = job.overrides;
  spec.protocol = job.protocol;
  const char* scratch = std::getenv("KJ_SCRATCH_DIR");
  spec.scratch = std::filesystem::path(scratch && *scratch ? scratch : "/tmp") / "runner";
  spec.limits.memory_bytes = static_cast<std::uint64_t>(job.limits.memory_gib * double(1ull << 30));
  spec.limits.processes = job.limits.processes;
  // The orchestrator kills the whole job at its limit; the judge stops waiting a little before, so that the
  // verdict names the phase.
  spec.deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<long long>(std::max(5.0, job.timeout_s - 5) * 1000));
  return spec;
}

void run_trials(const exec::evaluate_job& job, py::object& session, result_channel& channel, bool& all_passed,
                std::string& first_failure) {
  auto seeds =
      session.attr("trial_seeds")(job.protocol.seed, job.protocol.trials).cast<std::vector<std::uint64_t>>();
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    json trial = to_json(session.attr("run_trial")(seeds[i], job.protocol.atol, job.protocol.rtol));
    trial["type"] = "trial";
    trial["index"] = i;
    trial["seed"] = seeds[i];
    channel.emit(trial);
    if (!trial.value("passed", false) && all_passed) {
      all_passed = false;
      first_failure = fmt::format("trial {} (seed {}): {}", i, seeds[i], trial.value("message", ""));
    }
  }
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

void build(const exec::build_job& job, py::module_& runtime, result_channel& channel) {
  try {
    py::object session = py::module_::import("kj_runner").attr("RunnerSession")("cpu", py::dict(), false);
    session.attr("import_candidate")(job.candidate.path, job.candidate.source, job.overrides);
    channel.emit({{"type", "built"}});
  } catch (py::error_already_set& e) {
    channel.emit({{"type", "verdict"},
                  {"verdict", verdict_of(runtime, e)},
                  {"phase", "build"},
                  {"error", python_error_text(runtime, e)}});
  }
}

void evaluate(const exec::evaluate_job& job, py::module_& runtime, result_channel& channel) {
  const exec::protocol_spec& protocol = job.protocol;
  std::string phase = "load_problem";
  try {
    py::object session =
        runtime.attr("Session")(job.device, py::module_::import("json").attr("loads")(json(protocol).dump()));
    py::object applied = session.attr("load_problem")(job.problem.path, job.problem.source, job.overrides);
    channel.emit({{"type", "phase"}, {"phase", "load_candidate"}, {"applied_overrides", to_json(applied)}});

    phase = "load_candidate";
    std::string plugin_error;
    runner_link runner(spec_of(job, runtime),
                       job.device == "cuda" ? shared_cuda_plugin(plugin_error) : nullptr);
    if (!runner.load().value("ok", false))
      throw runner_failure(runner.load().value("kind", "crashed"), runner.load().value("error", ""));
    session.attr("remote") =
        runtime.attr("RemoteCandidate")(py::cpp_function([&runner](const std::string& message) {
                                          return runner.request(json::parse(message)).dump();
                                        }),
                                        job.device);
    channel.emit({{"type", "phase"}, {"phase", "build_models"}});

    phase = "build_models";
    session.attr("build_reference")(protocol.seed);
    channel.emit({{"type", "phase"}, {"phase", "trials"}});

    phase = "trials";
    const auto trials_start = std::chrono::steady_clock::now();
    bool all_passed = true;
    std::string first_failure;
    run_trials(job, session, channel, all_passed, first_failure);
    channel.emit({{"type", "phase_time"}, {"phase", "compatible"}, {"seconds", seconds_since(trials_start)}});
    if (job.strict) {
      phase = "strict";
      const auto strict_start = std::chrono::steady_clock::now();
      channel.emit({{"type", "phase"}, {"phase", "strict"}});
      run_case_classes(job, runtime, session, runner, channel);
      channel.emit({{"type", "phase_time"}, {"phase", "strict"}, {"seconds", seconds_since(strict_start)}});
    }
    if (!runner.alive()) runner.restart();
    report_findings(job, runner, channel);
    if (!all_passed) {
      channel.emit({{"type", "verdict"}, {"verdict", "incorrect"}, {"error", first_failure}});
      return;
    }
    if (job.timing.enabled) {
      phase = "timing";
      channel.emit({{"type", "phase"}, {"phase", "timing"}});
      time_subjects(job, session, runner, channel);
    }
    session.attr("remote") = py::none();
    channel.emit({{"type", "verdict"}, {"verdict", "correct"}, {"error", ""}});
  } catch (const runner_failure& e) {
    channel.emit({{"type", "verdict"}, {"verdict", e.kind}, {"phase", phase}, {"error", e.what()}});
  } catch (py::error_already_set& e) {
    channel.emit({{"type", "verdict"},
                  {"verdict", verdict_of(runtime, e)},
                  {"phase", phase},
                  {"error", python_error_text(runtime, e)}});
  } catch (const std::exception& e) {
    channel.emit({{"type", "verdict"}, {"verdict", "runtime_error"}, {"phase", phase}, {"error", e.what()}});
  }
}

} // namespace kj::worker
