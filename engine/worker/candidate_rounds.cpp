// Implements the candidate's rounds: driven call by call (robust) or timed by the runner, and the checks of
// the outputs they snapshotted.
#include "engine/worker/candidate_rounds.hpp"

#include "engine/exec/timing_methods.hpp"
#include "engine/worker/driven_timing.hpp"
#include "engine/worker/process_tree.hpp"
#include "timing/host_probe.hpp"

#include <fmt/core.h>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <unistd.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

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
    const bool fresh_call = calls_seen.insert(call).second || (slot == slots - 1 && call == calls - 1);
    // The last slot holds the last call; the others, taken right after their calls, may hold it too.
    const bool in_range = slot == slots - 1 ? call == calls - 1 : call >= 0 && call < calls;
    if (!fresh_slot || !fresh_call || !in_range)
      refuse(fmt::format("the candidate's process reported snapshot slot {} for timed call {} of {}", slot,
                         call, calls));
    last = last || slot == slots - 1;
  }
  const std::size_t expected = 1 + static_cast<std::size_t>(std::min(slots - 1, calls - 1));
  if (slots > 0 && (!last || snapshots.size() != expected))
    refuse("the candidate's process did not take the timed outputs' snapshots kj asked for");
}

// The runner's processes as the judge sees them (its PID namespace's view), for NVML's process list.
std::vector<std::uint32_t> runner_pids() {
  std::vector<std::uint32_t> out;
  for (int pid : descendants(::getpid()))
    out.push_back(static_cast<std::uint32_t>(pid));
  return out;
}

// The judge's NVML snapshot of the device, the runner's processes not counted as others.
cuda::nvml_snapshot judge_nvml(const cuda::plugin* plugin) {
  if (!plugin) return {};
  try {
    return plugin->nvml_excluding(runner_pids());
  } catch (const std::exception& e) {
    cuda::nvml_snapshot s;
    s.unavailable_reason = e.what();
    return s;
  }
}

// Checks a round's snapshots against the reference on each checked call's inputs, drawn again from the seed
// the judge chose for that call, while the runner is stopped; emits the timed_outputs cases.
void check_round_snapshots(const exec::evaluate_job& job, py::object& session, runner_link& runner,
                           result_channel& channel, phase_clock& phase, json round, std::uint64_t base,
                           bool fresh) {
  round["arena"] = runner.vault_spec();
  py::object cases;
  phase.enter("timed_checks");
  {
    const frozen_runner frozen(runner); // nothing of the candidate's runs while kj reads its snapshots
    cases = session.attr("check_snapshots")(round.dump(), job.protocol.atol, job.protocol.rtol, base, fresh);
  }
  runner.release_arena();
  phase.enter("timing");
  for (py::handle c : cases) {
    json event = to_json(c);
    event["type"] = "case";
    channel.emit(event);
  }
}

} // namespace

// A seed the candidate cannot know in advance: its inputs for timed calls are drawn from it.
std::uint64_t secret_seed() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 31) ^ rd();
}

// A round the judge drives call by call (driven_timing.hpp), for every method: robust with a seed per call
// and three snapshot slots; kernelbench and cuda-agent on one input set drawn from a secret seed, the last
// call's output checked.
candidate_timing driven_candidate_round(const exec::evaluate_job& job, const exec::timing_spec& spec,
                                        py::object& session, runner_link& runner, result_channel& channel,
                                        phase_clock& phase, const cuda::plugin* plugin, int cpu) {
  const bool fresh = exec::timing_method_named(spec.method).fresh_inputs;
  const long slots = !spec.check_outputs ? 0 : fresh ? 3 : 1;
  const std::uint64_t slot_bytes = slots ? session.attr("snapshot_bytes")().cast<std::uint64_t>() : 0;
  if (slots) {
    const json reserved = runner.reserve_arena(static_cast<std::uint64_t>(slots) * slot_bytes);
    if (!reserved.value("ok", false)) { // the problem was judged already: a process blaming it now is lying
      const std::string kind = reserved.value("kind", std::string("harness_error"));
      throw runner_failure(kind == "problem_error" ? "runtime_error" : kind, reserved.value("error", ""),
                           reserved.value("reason", ""));
    }
  }
  const std::uint64_t base = secret_seed() % (1ull << 62); // the fixed set's seed (kernelbench, cuda-agent)
  std::map<long, json> kept; // slot -> the latest snapshot in it, copied into the vault the moment it came
  bool misplaced = false;
  driven_options options{.spec = spec,
                         .slots = slots,
                         .slot_bytes = slot_bytes,
                         .cuda = job.device == device_kind::cuda,
                         .cpu = cpu};
  if (!fresh) options.fixed = {{"seed", base}, {"rng", "host"}}; // KernelBench's draw of its one set
  std::tie(options.go, options.prepare) = handshake_bounds(runner);
  options.calibration = runner.handshake_calibration().go_ms;
  options.take = [&](const json& snapshot) {
    const json slot = snapshot.is_object() ? snapshot.value("slot", json()) : json();
    if (!slot.is_number_integer() || slot.get<long>() < 0 || slot.get<long>() >= slots) {
      misplaced = true;
      return;
    }
    runner.take_snapshot(slot.get<std::uint64_t>() * slot_bytes, slot_bytes);
    kept[slot.get<long>()] = snapshot;
  };
  const cuda::nvml_snapshot nvml_before = judge_nvml(plugin);
  driven_result driven = drive_round(runner, options);
  if (plugin) record_nvml(nvml_before, judge_nvml(plugin), driven.timed);
  if (!driven.flags.empty()) driven.timed.params["flags_changed"] = driven.flags;
  candidate_timing result{driven.timed, driven.draw_ms};
  if (!slots) return result;
  if (misplaced)
    throw runner_failure("runtime_error", "the candidate's process reported a snapshot slot kj did not make");
  json round{{"calls", driven.calls}, {"snapshots", json::array()}, {"seeds", json::object()}};
  for (auto& [slot, snapshot] : kept) {
    round["snapshots"].push_back(snapshot);
    const long call = snapshot.value("call", -1L);
    if (const auto it = driven.seeds.find(call); it != driven.seeds.end())
      round["seeds"][std::to_string(call)] = it->second;
  }
  check_snapshot_calls(round, slots, result.timed.samples_ms.size());
  check_round_snapshots(job, session, runner, channel, phase, std::move(round), base, fresh);
  return result;
}

timing_result drive_subject(runner_link& runner, const exec::timing_spec& spec, const std::string& subject,
                            device_kind device) {
  driven_options options{.spec = spec, .subject = subject, .cuda = device == device_kind::cuda};
  options.fixed = {{"seed", 42}, {"rng", "device"}}; // inputs of the right shapes, drawn on the device
  std::tie(options.go, options.prepare) = handshake_bounds(runner);
  return drive_round(runner, options).timed;
}

} // namespace kj::worker
