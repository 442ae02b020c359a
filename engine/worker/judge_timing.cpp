// Implements time_subjects: alternating rounds, per-call fresh inputs, checked timed outputs, floor and
// trace.
#include "engine/worker/judge_timing.hpp"

#include "engine/exec/timing_methods.hpp"
#include "engine/worker/support.hpp"
#include "engine/worker/timing_bridge.hpp"
#include "timing/clock_bound.hpp"
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

// A seed the candidate cannot know in advance: its inputs for timed calls are drawn from it.
std::uint64_t secret_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 31) ^ rd();
}

json checked(runner_link& runner, const json& message, const runner_link::interim_handler& on_interim = {}) {
  json reply = runner.request(message, on_interim);
  if (!reply.value("ok", false))
    throw runner_failure(reply.value("kind", std::string("crashed")), reply.value("error", ""),
                         reply.value("reason", ""));
  return reply;
}

timing_result from_reply(const json& t) {
  return {t.value("method", ""), t.value("clock", ""), t.value("stop_reason", ""),
          t.value("params", json::object()), t.value("samples_ms", std::vector<double>{})};
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

// The snapshots the runner took: the last slot holds its last call, the others distinct earlier calls, as
// many as the round had. Its count and its list are its own word: anything else is its failure.
void check_snapshot_calls(const json& reply, long slots, std::size_t samples) {
  const long calls =
      reply.contains("calls") && reply["calls"].is_number_integer() ? reply["calls"].get<long>() : 0;
  const auto refuse = [](const std::string& what) { throw runner_failure("runtime_error", what); };
  if (calls < 1 || static_cast<std::size_t>(calls) < samples)
    refuse(fmt::format("the candidate's process reported {} timed calls for {} samples", calls, samples));
  const json snapshots = reply.value("snapshots", json::array());
  std::set<long> slots_seen, calls_seen;
  bool last = false;
  for (const auto& s : snapshots) {
    const auto number = [&](const char* key) {
      return s.is_object() && s.contains(key) && s[key].is_number_integer() ? s[key].get<long>() : -1L;
    };
    const long slot = number("slot"), call = number("call");
    const bool fresh_slot = slot >= 0 && slot < slots && slots_seen.insert(slot).second;
    const bool fresh_call = calls_seen.insert(call).second;
    const bool in_range = slot == slots - 1 ? call == calls - 1 : call >= 0 && call < calls - 1;
    if (!fresh_slot || !fresh_call || !in_range)
      refuse(fmt::format("the candidate's process reported snapshot slot {} for timed call {} of {}", slot,
                         call, calls));
    last = last || slot == slots - 1;
  }
  const std::size_t expected = 1 + static_cast<std::size_t>(std::min(slots - 1, calls - 1));
  if (slots > 0 && (!last || snapshots.size() != expected))
    refuse("the candidate's process did not take the timed outputs' snapshots kj asked for");
}

// Bytes kj's snapshots copied in the candidate's round (whole spans, or sampled chunks).
double snapshot_bytes(const json& reply) try {
  double bytes = 0;
  for (const auto& s : reply.value("snapshots", json::array()))
    for (const auto& o : s.value("outputs", json::array())) {
      if (!o.value("tensor", false)) continue;
      bytes += o.contains("chunks") ? static_cast<double>(o["chunks"].size()) * o.value("chunk_bytes", 0.0)
                                    : o.value("span_bytes", 0.0);
    }
  return bytes;
} catch (const json::exception&) { // the runner's description: malformed, it allows no copies
  return 0;
}

timing::round_clock clock_of(const timing_result& t, double wall_ms) {
  double sum = 0;
  for (double v : t.samples_ms)
    sum += v;
  return {wall_ms, sum, t.params.value("warmup_ms", 0.0),
          t.params.value("warmup_calls", std::size_t{0}) + t.samples_ms.size()};
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

struct candidate_timing {
  timing_result timed;
  timing::round_clock clock;
  double copies_ms = 0; // [ms] an allowance for kj's own snapshot copies in the runner
  double draw_ms = 0;   // [ms] kj's fastest input draw of the round in the runner (its word)
};

// One candidate round in the runner: fresh inputs per call from a secret seed; each call's output is taken
// right after the call (before anything else runs) into a slot of the arena when the runner's reservoir
// chooses it, and the last call's always; the judge checks each against the reference on that call's inputs,
// drawn from recipes it derives from its own seed, while the runner is stopped.
candidate_timing candidate_round(const exec::evaluate_job& job, const exec::timing_spec& spec,
                                 py::object& session, runner_link& runner, result_channel& channel,
                                 phase_clock& phase) {
  const bool fresh = exec::timing_method_named(spec.method).fresh_inputs;
  const long slots = !spec.check_outputs ? 0 : fresh ? 3 : 1;
  const std::uint64_t slot_bytes = slots ? session.attr("snapshot_bytes")().cast<std::uint64_t>() : 0;
  if (slots) {
    const json reserved = runner.reserve_arena(static_cast<std::uint64_t>(slots) * slot_bytes);
    if (!reserved.value("ok", false))
      throw runner_failure(reserved.value("kind", std::string("harness_error")), reserved.value("error", ""),
                           reserved.value("reason", ""));
  }
  const std::uint64_t base = secret_seed() % (1ull << 62);
  // Each snapshot is copied into the judge's vault the moment the runner reports it, before the candidate's
  // code can run again (it could rewrite the arena, which its process maps); the judge keeps its own record.
  std::map<long, json> kept; // slot -> the latest snapshot in it (a later call of the reservoir replaces one)
  bool misplaced = false;
  double copied_ms =
      0; // the runner's copy into the arena and the judge's into the vault, while the round runs
  const auto take = [&](const json& interim) -> json {
    const json snapshot = interim.value("snapshot", json::object());
    const json slot = snapshot.is_object() ? snapshot.value("slot", json()) : json();
    if (!slot.is_number_integer() || slot.get<long>() < 0 || slot.get<long>() >= slots) {
      misplaced = true;
    } else {
      runner.take_snapshot(slot.get<std::uint64_t>() * slot_bytes, slot_bytes);
      kept[slot.get<long>()] = snapshot;
      copied_ms +=
          (snapshot_bytes({{"snapshots", json::array({snapshot})}}) + static_cast<double>(slot_bytes)) / 2e6 +
          1.0;
    }
    return {{"op", "taken"}};
  };
  const auto start = std::chrono::steady_clock::now();
  const json reply = checked(runner,
                             {{"op", "time"},
                              {"subject", "candidate"},
                              {"spec", spec},
                              {"base", base},
                              {"fresh", fresh},
                              {"slots", slots},
                              {"slot_bytes", slot_bytes}},
                             take);
  candidate_timing result;
  try { // the reply is the candidate's process's word: a malformed one is its failure
    result.timed = from_reply(reply.at("timing"));
    result.draw_ms = reply.value("draw_ms", 0.0);
  } catch (const json::exception& e) {
    throw runner_failure("runtime_error",
                         std::string("the candidate's process answered a timing round with ") + e.what());
  }
  json round{{"calls", reply.value("calls", json())}, {"snapshots", json::array()}};
  for (auto& [slot, snapshot] : kept)
    round["snapshots"].push_back(snapshot);
  result.clock = clock_of(result.timed, ms_since(start));
  result.copies_ms = copied_ms;
  if (slots) {
    if (misplaced)
      throw runner_failure("runtime_error",
                           "the candidate's process reported a snapshot slot kj did not make");
    check_snapshot_calls(round, slots, result.timed.samples_ms.size());
    round["arena"] = runner.vault_spec();
    py::object cases;
    phase.enter("timed_checks");
    {
      const frozen_runner frozen(runner); // nothing of the candidate's runs while kj reads its snapshots
      cases =
          session.attr("check_snapshots")(round.dump(), job.protocol.atol, job.protocol.rtol, base, fresh);
    }
    runner.release_arena();
    phase.enter("timing");
    for (py::handle c : cases) {
      json event = to_json(c);
      event["type"] = "case";
      channel.emit(event);
    }
  }
  return result;
}

struct reference_timing {
  timing_result timed;
  timing::round_clock clock;
  double draw_ms = 0;           // [ms] the fastest of the same draws in the judge
  std::vector<double> draws_ms; // [ms] all of them: their spread is the machine's noise
};

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
    const auto start = std::chrono::steady_clock::now();
    result.timed = time_callable(reference, device, spec, fresh ? prepare : nullptr);
    result.clock = clock_of(result.timed, ms_since(start));
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
  const json reply = runner.request({{"op", "time"}, {"subject", "graph"}, {"spec", spec}, {"base", 42}});
  if (reply.value("ok", false))
    report_timing(channel, "candidate_graph", from_reply(reply.at("timing")));
  else
    channel.emit(
        {{"type", "graph_error"}, {"subject", "candidate_graph"}, {"error", reply.value("error", "")}});
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

struct timed_pair {
  timing_result candidate, reference;
};

// The judge's clock against the candidate's timer over all rounds together (robust, fresh inputs: both sides
// do the same work around each call): time the judge's clock saw beyond the candidate's timer, or kj's draws
// took beyond the judge's, is charged to every call past its noise allowance; a timer that missed more than
// it reported is not credited at all (timing/clock_bound.hpp). The rounds are pooled, not checked one by one:
// what a candidate hides, it hides in every call, while a busy host (parallel compiles) slows some rounds of
// either side; the pooled fastest draw and overhead lose most of that noise.
void bound_by_clock(timing_result& merged, const std::vector<candidate_timing>& candidate,
                    const std::vector<reference_timing>& reference, bool cuda) {
  json rounds = json::array();
  timing::round_clock candidate_total, reference_total;
  std::vector<double> samples, judge_draws;
  double copies_ms = 0, draw_ms = 0, judge_draw_ms = 0;
  const auto fastest = [](double so_far, double v) {
    return v > 0 && (so_far == 0 || v < so_far) ? v : so_far;
  };
  for (std::size_t i = 0; i < candidate.size() && i < reference.size(); ++i) {
    candidate_total += candidate[i].clock;
    reference_total += reference[i].clock;
    copies_ms += candidate[i].copies_ms;
    samples.insert(samples.end(), candidate[i].timed.samples_ms.begin(), candidate[i].timed.samples_ms.end());
    draw_ms = fastest(draw_ms, candidate[i].draw_ms);
    judge_draw_ms = fastest(judge_draw_ms, reference[i].draw_ms);
    judge_draws.insert(judge_draws.end(), reference[i].draws_ms.begin(), reference[i].draws_ms.end());
    rounds.push_back({{"wall_ms", candidate[i].clock.wall_ms},
                      {"draw_ms", candidate[i].draw_ms},
                      {"judge_draw_ms", reference[i].draw_ms}});
  }
  if (rounds.empty()) return;
  const timing::clock_check c = timing::check_against_wall(candidate_total, reference_total,
                                                           timing::summarize(samples).median, copies_ms);
  const double judge_spread_ms =
      judge_draws.empty() ? 0 : timing::summarize(judge_draws).median - judge_draw_ms; // the judge's noise
  const timing::clock_check d = timing::check_draws(draw_ms, judge_draw_ms, judge_spread_ms);
  merged.params["judge_clock"] = {{"rounds", rounds},
                                  {"unaccounted_ms", c.unaccounted_ms},
                                  {"allowance_ms", c.allowance_ms},
                                  {"draw_ms", draw_ms},
                                  {"judge_draw_ms", judge_draw_ms},
                                  {"draw_allowance_ms", d.allowance_ms},
                                  {"judge_draw_spread_ms", judge_spread_ms}};
  // Enforced on CUDA only, recorded on the host: there the page faults and frees of large outputs outside
  // the window exceed what the wall clock would bound, and an honest candidate's OpenMP threads, still
  // spinning after its call on a small machine, slow kj's draw in its process as much as a hidden
  // precomputation. A timer that hid more than it reported is not credited; time beyond either check's
  // allowance is charged to every timed call.
  if (!cuda) return;
  if (!c.credited && merged.params.value("trusted", true)) {
    merged.params["trusted"] = false;
    merged.params["untrusted_reason"] = c.reason;
    return;
  }
  for (const auto& [check, name] : {std::pair{&c, "wall"}, std::pair{&d, "draw"}})
    if (check->charge_ms > 0) {
      for (double& sample : merged.samples_ms)
        sample += check->charge_ms;
      merged.params["judge_clock"][fmt::format("{}_charge_ms", name)] = check->charge_ms;
      merged.params["judge_clock"][fmt::format("{}_charge_reason", name)] = check->reason;
    }
}

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
  for (int r = 0; r < rounds; ++r) {
    candidate_rounds.push_back(candidate_round(job, round_spec, session, runner, channel, phase));
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
  if (fresh) bound_by_clock(pair.candidate, candidate_rounds, reference_rounds, device.cuda);
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
      3, max_host_change, [&] { return clock::now() + 2 * last < runner.deadline(); });
  compare_host_conditions(steadiest.result.candidate, steadiest.result.reference, steadiest.attempts);
  return std::move(steadiest.result);
}

} // namespace

void time_subjects(const exec::evaluate_job& job, py::object& session, runner_link& runner,
                   result_channel& channel, phase_clock& phase) {
  const exec::timing_spec& spec = job.timing;
  const device_context device = session_device(job.device, session);
  auto [candidate, reference] = time_pair_steadily(job, session, runner, channel, device, phase);
  candidate.params["fresh_inputs"] = reference.params["fresh_inputs"] =
      exec::timing_method_named(spec.method).fresh_inputs;
  candidate.params["process"] = "runner";
  report_timing(channel, "candidate", candidate);
  report_timing(channel, "reference_eager", reference);
  if (spec.floor) { // a short measurement in the runner: the floor is small and steady (100 samples)
    phase.enter("floor");
    exec::timing_spec floor = spec;
    floor.max_time_ms = std::min(spec.max_time_ms, 200.0);
    floor.max_samples = std::min(spec.max_samples, 100);
    floor.method = "robust";
    const json reply = checked(runner, {{"op", "time"}, {"subject", "empty"}, {"spec", floor}, {"base", 42}});
    report_timing(channel, "empty_forward", from_reply(reply.at("timing")));
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
