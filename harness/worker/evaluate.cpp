// The evaluation sequence, written as the steps it takes; the torch-facing work is in kj_runtime.py.
#include "harness/worker/evaluate.hpp"

#include "harness/timing/statistics.hpp"
#include "harness/worker/support.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// The strict verdict's case classes, each reported as it finishes; a class that raises is one failing case.
void run_case_classes(const exec::evaluate_job& job, py::module_& runtime, py::object& session,
                      result_channel& channel) {
  py::object verifier = py::module_::import("kj_verify").attr("Verifier")(session, job.protocol.seed);
  for (const auto& cls : job.case_classes) {
    const auto start = std::chrono::steady_clock::now();
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

// Backend flags the candidate flipped (TF32, reduced-precision reductions, cuDNN modes) become a finding.
void report_flag_changes(py::object& session, result_channel& channel) {
  py::dict changes = session.attr("flag_changes");
  for (auto [name, change] : changes)
    channel.emit({{"type", "finding"},
                  {"kind", "global_flags"},
                  {"excerpt", "torch." + name.cast<std::string>() + ": " + change.cast<std::string>()}});
  changes.clear(); // each change is reported once
}

// PyTorch ops that compute inside ModelNew.forward (one forward under a dispatch recorder) are a
// torch_fallback finding, on every device (the GPU's kernel trace measures the share besides).
void report_torch_ops(py::object& session, std::uint64_t seed, result_channel& channel) {
  try {
    const json ops = to_json(session.attr("torch_ops")(seed));
    if (ops.empty()) return;
    std::string text;
    for (const auto& [name, count] : ops.items())
      text += fmt::format("{}{} x{}", text.empty() ? "" : ", ", name, count.get<int>());
    channel.emit({{"type", "finding"},
                  {"kind", "torch_fallback"},
                  {"excerpt", "ModelNew.forward ran PyTorch ops: " + text.substr(0, 300)}});
  } catch (py::error_already_set&) { // the forward raised here: the trials report that, not this probe
  }
}

// CUDA graphs (--graphs): each forward captured once and its replays timed; a forward that cannot be
// captured is reported, not judged.
void time_graphs(const exec::evaluate_job& job, py::object& session, const device_context& device,
                 result_channel& channel) {
  for (const std::string which : {"candidate", "reference"}) {
    const std::string subject = which == "candidate" ? "candidate_graph" : "reference_eager_graph";
    try {
      py::object replay = session.attr("capture_graph")(which);
      const std::function<void()> call = [&] { replay(); };
      report_timing(channel, subject, time_callable(call, device, job.timing));
    } catch (py::error_already_set& e) {
      channel.emit({{"type", "graph_error"}, {"subject", subject}, {"error", std::string(e.what())}});
    }
  }
}

// One round's share of the stopping rule's budget (at least 3 samples a round).
exec::timing_spec split_into_rounds(const exec::timing_spec& spec, int rounds) {
  if (rounds <= 1) return spec;
  exec::timing_spec r = spec;
  r.min_samples = std::max(3, (spec.min_samples + rounds - 1) / rounds);
  r.min_time_ms = spec.min_time_ms / rounds;
  r.max_time_ms = spec.max_time_ms / rounds;
  r.max_samples = std::max(3, spec.max_samples / rounds);
  return r;
}

// The rounds of one subject as one timing: samples (and CUDA host times) concatenated in order, the whole
// spec with the round count, NVML before the first round and after the last, throttled when any round was,
// the host probes of all rounds.
timing_result merge_rounds(std::vector<timing_result> rounds, const exec::timing_spec& spec) {
  timing_result merged = std::move(rounds.front());
  if (rounds.size() == 1) return merged;
  const json first = merged.params;
  merged.params = json(spec);
  for (const char* key : {"headline", "l2_flush_bytes", "nvml_before", "cuda_plugin_error", "fallback"})
    if (first.contains(key)) merged.params[key] = first[key];
  merged.params["rounds"] = rounds.size();
  json host_ms = first.value("host_ms", json::array());
  std::vector<timing::host_probe_result> probes;
  const auto add_probes = [&](const json& params) {
    for (const auto& p : params.value("host_probe", json::array()))
      probes.push_back({p.value("cpu_ns", 0.0), p.value("mem_ns", 0.0)});
  };
  add_probes(first);
  json stop_reasons = json::array({merged.stop_reason});
  bool throttled = first.value("throttled", false);
  std::size_t warmup_calls = first.value("warmup_calls", std::size_t{0});
  for (std::size_t i = 1; i < rounds.size(); ++i) {
    const timing_result& r = rounds[i];
    merged.samples_ms.insert(merged.samples_ms.end(), r.samples_ms.begin(), r.samples_ms.end());
    for (const auto& h : r.params.value("host_ms", json::array()))
      host_ms.push_back(h);
    stop_reasons.push_back(r.stop_reason);
    throttled = throttled || r.params.value("throttled", false);
    warmup_calls += r.params.value("warmup_calls", std::size_t{0});
    add_probes(r.params);
    for (const char* key : {"nvml_after", "warning"})
      if (r.params.contains(key)) merged.params[key] = r.params[key];
  }
  if (!host_ms.empty()) merged.params["host_ms"] = host_ms;
  merged.params["round_stop_reasons"] = stop_reasons;
  merged.params["warmup_calls"] = warmup_calls;
  if (!probes.empty()) record_host_probes(probes, merged.params);
  if (first.contains("throttled")) merged.params["throttled"] = throttled;
  merged.stop_reason = "rounds";
  return merged;
}

// Candidate (with the check of its timed outputs and its kernel trace), eager reference, the empty-forward
// floor and, on request, CUDA-graph replays; all with the job's timing method.
void time_subjects(const exec::evaluate_job& job, py::object& session, result_channel& channel) {
  const exec::timing_spec& spec = job.timing;
  const gc_paused no_gc;
  // robust: several input sets drawn on the device; the other methods: KernelBench's one CPU-drawn set
  const bool robust = spec.method == "robust";
  const int sets =
      session.attr("prepare_timing")(job.protocol.seed, robust ? spec.input_sets : 1, robust).cast<int>();
  const device_context device = session_device(job.device, session);
  py::object call_candidate = session.attr("call_candidate");
  py::object call_reference = session.attr("call_reference");
  py::object call_empty = session.attr("call_empty");
  const std::function<void()> candidate = [&] { call_candidate(); };
  const std::function<void()> reference = [&] { call_reference(); };
  const std::function<void()> empty = [&] { call_empty(); };

  // robust: alternating rounds, so that a slow drift of the machine (clocks, power) reaches both subjects
  const int rounds = robust ? std::max(1, spec.rounds) : 1;
  const exec::timing_spec round_spec = split_into_rounds(spec, rounds);
  std::vector<timing_result> candidate_rounds, reference_rounds;
  for (int r = 0; r < rounds; ++r) {
    candidate_rounds.push_back(time_callable(candidate, device, round_spec));
    session.attr("restore_flags")(); // the reference is timed with the flags it was built under
    reference_rounds.push_back(time_callable(reference, device, round_spec));
  }
  timing_result candidate_timing = merge_rounds(std::move(candidate_rounds), spec);
  timing_result reference_timing = merge_rounds(std::move(reference_rounds), spec);
  candidate_timing.params["input_sets"] = reference_timing.params["input_sets"] = sets;
  report_timing(channel, "candidate", candidate_timing);
  if (spec.check_outputs)
    for (py::handle c : session.attr("check_timed_outputs")(job.protocol.atol, job.protocol.rtol)) {
      json event = to_json(c);
      event["type"] = "case";
      channel.emit(event);
    }
  report_timing(channel, "reference_eager", reference_timing);
  session.attr("reset_rotation")();
  if (spec.floor) { // a short measurement: the floor is small and steady
    exec::timing_spec floor = spec;
    floor.max_time_ms = std::min(spec.max_time_ms, 200.0);
    floor.max_samples = std::min(spec.max_samples, 300);
    report_timing(channel, "empty_forward", time_callable(empty, device, floor));
  }
  if (device.cuda && spec.graphs) time_graphs(job, session, device, channel);
  if (device.cuda && !candidate_timing.samples_ms.empty()) {
    json trace;
    try {
      trace = trace_callable(candidate, device, timing::summarize(candidate_timing.samples_ms).median);
    } catch (const std::exception& e) { // a tracing failure is the harness's, never the candidate's verdict
      trace = {{"error", e.what()}};
    }
    channel.emit({{"type", "trace"}, {"subject", "candidate"}, {"trace", trace}});
  }
}

} // namespace

std::string python_error_text(py::module_& runtime, py::error_already_set& error) {
  if (error.matches(runtime.attr("KjError"))) return error.value().attr("message").cast<std::string>();
  return runtime.attr("format_exception")(error.value()).cast<std::string>();
}

void build(const exec::build_job& job, py::module_& runtime, result_channel& channel) {
  try {
    py::object session = runtime.attr("Session")("cpu");
    session.attr("load_problem")(job.problem.path, job.problem.source, job.overrides);
    session.attr("load_candidate")(job.candidate.path, job.candidate.source, job.overrides);
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
    session.attr("load_candidate")(job.candidate.path, job.candidate.source, job.overrides);
    channel.emit({{"type", "phase"}, {"phase", "build_models"}});

    phase = "build_models";
    session.attr("build_models")(protocol.seed);
    channel.emit({{"type", "phase"}, {"phase", "trials"}});

    phase = "trials";
    const auto trials_start = std::chrono::steady_clock::now();
    bool all_passed = true;
    std::string first_failure;
    auto seeds =
        session.attr("trial_seeds")(protocol.seed, protocol.trials).cast<std::vector<std::uint64_t>>();
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      json trial = to_json(session.attr("run_trial")(seeds[i], protocol.atol, protocol.rtol));
      trial["type"] = "trial";
      trial["index"] = i;
      trial["seed"] = seeds[i];
      channel.emit(trial);
      if (!trial.value("passed", false) && all_passed) {
        all_passed = false;
        first_failure = fmt::format("trial {} (seed {}): {}", i, seeds[i], trial.value("message", ""));
      }
    }
    const auto strict_start = std::chrono::steady_clock::now();
    channel.emit({{"type", "phase_time"},
                  {"phase", "compatible"},
                  {"seconds", std::chrono::duration<double>(strict_start - trials_start).count()}});
    if (job.strict) {
      phase = "strict";
      channel.emit({{"type", "phase"}, {"phase", "strict"}});
      run_case_classes(job, runtime, session, channel);
      channel.emit(
          {{"type", "phase_time"},
           {"phase", "strict"},
           {"seconds",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - strict_start).count()}});
    }
    report_flag_changes(session, channel);
    report_torch_ops(session, protocol.seed, channel);
    if (!all_passed) {
      channel.emit({{"type", "verdict"}, {"verdict", "incorrect"}, {"error", first_failure}});
      return;
    }

    if (job.timing.enabled) {
      phase = "timing";
      channel.emit({{"type", "phase"}, {"phase", "timing"}});
      time_subjects(job, session, channel);
      report_flag_changes(session, channel);
    }
    channel.emit({{"type", "verdict"}, {"verdict", "correct"}, {"error", ""}});
  } catch (py::error_already_set& e) {
    std::string verdict = verdict_of(runtime, e);
    channel.emit({{"type", "verdict"},
                  {"verdict", verdict},
                  {"phase", phase},
                  {"error", python_error_text(runtime, e)}});
  } catch (const std::exception& e) {
    channel.emit({{"type", "verdict"}, {"verdict", "runtime_error"}, {"phase", phase}, {"error", e.what()}});
  }
}

} // namespace kj::worker
