// Implements time_subjects: alternating rounds, per-call fresh inputs, checked timed outputs, floor and
// trace.
#include "engine/worker/judge_timing.hpp"

#include "engine/exec/timing_methods.hpp"
#include "engine/worker/candidate_rounds.hpp"
#include "engine/worker/judge_bounds.hpp"
#include "engine/worker/support.hpp"
#include "engine/worker/timing_bridge.hpp"
#include "engine/worker/timing_cpus.hpp"
#include "timing/host_probe.hpp"
#include "timing/statistics.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <map>
#include <pybind11/stl.h>
#include <random>
#include <set>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

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
  json round_samples = json::array({merged.samples_ms.size()}); // each round's count: reports split by it
  bool throttled = first.value("throttled", false);
  std::size_t warmup_calls = first.value("warmup_calls", std::size_t{0});
  for (std::size_t i = 1; i < rounds.size(); ++i) {
    const timing_result& r = rounds[i];
    merged.samples_ms.insert(merged.samples_ms.end(), r.samples_ms.begin(), r.samples_ms.end());
    for (const auto& h : r.params.value("host_ms", json::array()))
      host_ms.push_back(h);
    stop_reasons.push_back(r.stop_reason);
    round_samples.push_back(r.samples_ms.size());
    throttled = throttled || r.params.value("throttled", false);
    warmup_calls += r.params.value("warmup_calls", std::size_t{0});
    add_probes(r.params);
    for (const char* key : {"nvml_after", "warning"})
      if (r.params.contains(key)) merged.params[key] = r.params[key];
  }
  if (!host_ms.empty()) merged.params["host_ms"] = host_ms;
  merged.params["round_stop_reasons"] = stop_reasons;
  merged.params["round_samples"] = round_samples;
  merged.params["warmup_calls"] = warmup_calls;
  if (!probes.empty()) record_host_probes(probes, merged.params);
  if (first.contains("throttled")) merged.params["throttled"] = throttled;
  merged.stop_reason = "rounds";
  return merged;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

reference_timing reference_round(const exec::timing_spec& spec, py::object& session,
                                 const device_context& device) {
  const bool fresh = exec::timing_method_named(spec.method).fresh_inputs;
  session.attr("timing_begin")(secret_seed() % (1ull << 62), fresh);
  py::object call_reference = session.attr("call_reference");
  py::object prepare_call = session.attr("prepare_call");
  py::object sync = session.attr("sync");
  std::vector<double> draws_ms;
  const std::function<void()> reference = [&] { call_reference(); };
  py::object drop_output = session.attr("drop_output");
  const std::function<void()> prepare = [&] { // timed as the runner times its own: the draw, synchronized
    drop_output();
    const auto start = std::chrono::steady_clock::now();
    prepare_call();
    sync();
    draws_ms.push_back(ms_since(start));
  };
  reference_timing result;
  {
    const gc_paused no_gc;
    result.timed = time_callable(reference, device, spec, fresh ? prepare : nullptr);
  }
  session.attr("timing_end")(); // its inputs go: the candidate's next round has the device's memory
  if (!draws_ms.empty()) result.draw_ms = *std::min_element(draws_ms.begin(), draws_ms.end());
  result.draws_ms = std::move(draws_ms);
  return result;
}

// CUDA graphs (--graphs): each forward captured once and its replays timed; a forward that cannot be captured
// is reported, not judged.
void time_graphs(const exec::timing_spec& spec, py::object& session, runner_link& runner,
                 const device_context& device, result_channel& channel) {
  try {
    report_timing(channel, "candidate_graph", drive_subject(runner, spec, "graph", device_kind::cuda));
  } catch (const runner_failure& e) { // a forward that cannot be captured: reported, not judged
    channel.emit({{"type", "graph_error"}, {"subject", "candidate_graph"}, {"error", std::string(e.what())}});
    if (!runner.alive()) runner.restart();
  }
  try {
    const frozen_runner frozen(runner);
    py::object replay = session.attr("capture_graph")();
    const std::function<void()> call = [&] { replay(); };
    report_timing(channel, "reference_eager_graph", time_callable(call, device, spec));
  } catch (py::error_already_set& e) {
    channel.emit(
        {{"type", "graph_error"}, {"subject", "reference_eager_graph"}, {"error", std::string(e.what())}});
  }
}

// How far the host probe saw the machine's speed move across the candidate's and the reference's rounds.
double pair_host_change(const timing_result& candidate, const timing_result& reference) {
  std::vector<timing::host_probe_result> all;
  for (const timing_result* t : {&candidate, &reference})
    for (const auto& p : t->params.value("host_probe", json::array()))
      all.push_back({p.value("cpu_ns", 0.0), p.value("mem_ns", 0.0)});
  return timing::host_change(all);
}

// On the host, a speedup is a ratio of two host timings: when the host probe saw the machine's speed move by
// more than 10% across the candidate's and the reference's rounds together (a neighbour's load, a clock
// change), the two sides were not timed under comparable conditions and no speedup is credited (the timing is
// kept, marked). On a GPU the probes are recorded only: a GPU-bound forward does not follow the host's speed.
constexpr double max_host_change = 0.10;

void compare_host_conditions(timing_result& candidate, const timing_result& reference, int attempts) {
  const double change = pair_host_change(candidate, reference);
  candidate.params["host_change_pair"] = change;
  candidate.params["host_attempts"] = attempts;
  if (change <= max_host_change) return;
  candidate.params["trusted"] = false;
  candidate.params["untrusted_reason"] = fmt::format(
      "the host's speed moved by {:.0f}% across the candidate's and the reference's rounds (host probe), "
      "in each of {} attempts: the two were not timed under comparable conditions",
      100 * change, attempts);
}

// kj's own draw of one timed call's inputs, in the judge (the fastest of three), before the candidate's first
// round: what a runner's reported draw may be given back to the candidate's clock at most (2x and 1 ms for
// the host's noise), since a candidate's process could report any draw.
double own_draw_cap_ms(py::object& session) {
  session.attr("timing_begin")(secret_seed() % (1ull << 62), true);
  py::object prepare_call = session.attr("prepare_call");
  py::object sync = session.attr("sync");
  double fastest = 0;
  for (int i = 0; i < 3; ++i) {
    const auto start = std::chrono::steady_clock::now();
    prepare_call();
    sync();
    const double ms = ms_since(start);
    fastest = i == 0 ? ms : std::min(fastest, ms);
  }
  session.attr("timing_end")();
  return 2 * fastest + 1.0;
}

struct timed_pair {
  timing_result candidate, reference;
};

// The candidate's and the reference's alternating rounds (robust) or one round each.
timed_pair time_pair(const exec::evaluate_job& job, py::object& session, runner_link& runner,
                     result_channel& channel, const device_context& device, phase_clock& phase) {
  const exec::timing_spec& spec = job.timing;
  // robust: alternating rounds, so that a slow drift of the machine (clocks, power) reaches both subjects
  const bool fresh = exec::timing_method_named(spec.method).fresh_inputs;
  const int rounds = fresh ? std::max(1, spec.rounds) : 1;
  const exec::timing_spec round_spec = split_into_rounds(spec, rounds);
  std::vector<candidate_timing> candidate_rounds;
  std::vector<reference_timing> reference_rounds;
  std::string plugin_error;
  const cuda::plugin* plugin = device.cuda ? shared_cuda_plugin(plugin_error) : nullptr;
  runner.set_own_draw_cap_ms(fresh ? own_draw_cap_ms(session) : 0); // the floor's rounds too
  const timing_cpus cpus = choose_timing_cpus();                    // opt-in: both subjects on one CPU
  for (int r = 0; r < rounds; ++r) {
    {
      const thread_on_cpu waiting(cpus.waiting);
      candidate_rounds.push_back(
          driven_candidate_round(job, round_spec, session, runner, channel, phase, plugin, cpus.timed));
    }
    const thread_on_cpu timed(cpus.timed);
    const frozen_runner frozen(runner); // nothing of the candidate's runs beside the reference
    reference_rounds.push_back(reference_round(round_spec, session, device));
  }
  std::vector<timing_result> candidate_results, reference_results;
  for (auto& c : candidate_rounds)
    candidate_results.push_back(c.timed);
  for (auto& r : reference_rounds)
    reference_results.push_back(r.timed);
  timed_pair pair{merge_rounds(std::move(candidate_results), spec),
                  merge_rounds(std::move(reference_results), spec)};
  if (cpus.on()) pair.candidate.params["timing_cpus"] = pair.reference.params["timing_cpus"] = cpus.to_json();
  if (fresh)
    bound_by_clock(pair.candidate, candidate_rounds, reference_rounds, device.cuda);
  else
    mark_systematic_charges(pair.candidate, candidate_rounds);
  return pair;
}

// On the host, a pair timed while the machine's speed moved is timed again (3 attempts at most) while the job
// has time left for two more attempts as long as the last one (the floor and the trace come after); the
// attempt under the steadiest conditions is kept. A candidate never loses its verdict to a retry's timeout.
timed_pair time_pair_steadily(const exec::evaluate_job& job, py::object& session, runner_link& runner,
                              result_channel& channel, const device_context& device, phase_clock& phase) {
  if (device.cuda) return time_pair(job, session, runner, channel, device, phase);
  using clock = std::chrono::steady_clock;
  clock::duration last{};
  auto steadiest = timing::steadiest_attempt(
      [&] {
        const auto start = clock::now();
        timed_pair pair = time_pair(job, session, runner, channel, device, phase);
        last = clock::now() - start;
        const double change = pair_host_change(pair.candidate, pair.reference);
        return std::pair{std::move(pair), change};
      },
      3, max_host_change, [&] { return 2 * last < runner.clock().candidate_left(); });
  compare_host_conditions(steadiest.result.candidate, steadiest.result.reference, steadiest.attempts);
  return std::move(steadiest.result);
}

} // namespace

void time_subjects(const exec::evaluate_job& job, py::object& session, runner_link& runner,
                   result_channel& channel, phase_clock& phase, std::optional<precision> numerics) {
  const exec::timing_spec& spec = job.timing;
  const device_context device = session_device(job.device, session);
  auto [candidate, reference] = time_pair_steadily(job, session, runner, channel, device, phase);
  candidate.params["fresh_inputs"] = reference.params["fresh_inputs"] =
      exec::timing_method_named(spec.method).fresh_inputs;
  candidate.params["process"] = "runner";
  if (numerics) candidate.params["numerics"] = name_of(*numerics);
  if (!runner.isolation_note().empty()) candidate.params["runner_isolation"] = runner.isolation_note();
  std::string plugin_error;
  if (const cuda::plugin* plugin = device.cuda ? shared_cuda_plugin(plugin_error) : nullptr;
      plugin && !candidate.samples_ms.empty())
    bound_by_physics(candidate, session, *plugin);
  report_timing(channel, "candidate", candidate);
  report_timing(channel, "reference_eager", reference);
  if (spec.floor) { // a short measurement: the floor is small and steady (100 samples)
    phase.enter("floor");
    exec::timing_spec floor = spec;
    floor.max_time_ms = std::min(spec.max_time_ms, 200.0);
    floor.max_samples = std::min(spec.max_samples, 100);
    floor.min_samples = std::min(spec.min_samples, floor.max_samples); // --min-samples above 100: capped too
    floor.method = "robust";
    report_timing(channel, "empty_forward", drive_subject(runner, floor, "empty", job.device));
  }
  if (device.cuda && spec.graphs) {
    phase.enter("graphs");
    time_graphs(spec, session, runner, device, channel);
  }
  if (device.cuda && !candidate.samples_ms.empty()) {
    phase.enter("trace");
    const json reply =
        runner.request({{"op", "trace"}, {"event_ms", timing::summarize(candidate.samples_ms).median}});
    // a tracing failure is the harness's, never the candidate's verdict
    const json trace =
        reply.value("ok", false) ? reply.value("trace", json()) : json{{"error", reply.value("error", "")}};
    channel.emit({{"type", "trace"}, {"subject", "candidate"}, {"trace", trace}});
  }
}

} // namespace kj::worker
