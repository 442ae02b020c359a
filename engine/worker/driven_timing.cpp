// Implements the judge's side of a driven round: a remote subject for the cold-measurement loop.
#include "engine/worker/driven_timing.hpp"

#include "timing/host_probe.hpp"
#include "timing/measure.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <random>

using nlohmann::json;

namespace kj::worker {
namespace {

std::uint64_t call_seed() { // from the OS, per call: nothing in the candidate's process can derive it
  std::random_device os;
  return ((static_cast<std::uint64_t>(os()) << 32) ^ os()) % (1ull << 62);
}

json checked_reply(const json& reply) {
  if (reply.value("ok", false)) return reply;
  // The problem's draws ran in the judge and in this process's checked calls before any timing: a process
  // that blames the problem now broke kj's draw itself (its own failure, never a "not judged" problem_error).
  if (reply.value("kind", "") == "problem_error")
    throw runner_failure(
        "runtime_error",
        "the candidate's process failed at kj's draw of a timed call's inputs, which its checked "
        "calls and kj's judge drew: " +
            reply.value("error", std::string()));
  throw runner_failure(reply.value("kind", std::string("crashed")), reply.value("error", ""),
                       reply.value("reason", ""));
}

double number(const json& reply, const char* key) {
  const auto it = reply.find(key);
  if (it == reply.end() || !it->is_number() || !(it->get<double>() >= 0))
    throw runner_failure(
        "runtime_error",
        fmt::format("the candidate's process answered a timed call without a valid '{}'", key));
  return it->get<double>();
}

// The runner as the loop's subject: prepare() is "tp" with the call's fresh seed, call() is "tg" bracketed by
// the judge's clock, stop_ms() the sample credited under the handshake bound.
class remote_subject final : public timing::timed_subject {
public:
  remote_subject(runner_link& runner, const driven_options& options, driven_result& out)
      : m_runner(runner), m_options(options), m_out(out) {}

  bool flush_next = true;  // the kernelbench and cuda-agent loops warm up without a flush
  bool trace_next = false; // cuda-agent: the next call's sample is its traced kernel time

  void prepare() override {
    json request{{"op", "tp"}, {"flush", flush_next}};
    if (m_options.fixed.is_null()) { // robust: a seed for this call alone, sent only now
      const std::uint64_t seed = call_seed();
      m_out.seeds[m_out.calls] = seed;
      request["seed"] = seed;
    }
    double bracket = 0;
    const json reply =
        checked_reply(m_runner.timed_request(request, bracket, m_prepares.empty() ? 0 : m_prepares.back()));
    m_prepares.push_back(bracket);
    double draw = number(reply, "draw_ms");
    // On CUDA the draw is bounded as the call is: what the prepare took beyond its reported draw and the
    // flush's calibrated cost is counted as draw (work moved into kj's draw is charged by the draw check).
    // The draw and the flush are kj's work in the candidate's process, not the candidate's time (--timeout):
    // given back to its clock, a reported draw only up to the judge's own (a forged draw_ms gains no more).
    m_runner.refund_own_work(std::min(bracket, std::min(draw, m_runner.own_draw_cap_ms()) +
                                                   std::max(0.0, m_options.prepare.allowance_ms)));
    if (m_options.cuda) draw = std::max(draw, bracket - m_options.prepare.allowance_ms);
    m_draws.push_back(draw);
  }
  void flush() override {} // part of prepare, in the runner
  void start() override {}
  void call() override {
    m_last = m_runner.go(trace_next, m_raw.empty() ? 0 : m_raw.back());
    checked_reply(m_last.sample);
    if (m_last.after.contains("snapshot") && m_options.take) m_options.take(m_last.after["snapshot"]);
    checked_reply(m_last.after);
    ++m_out.calls;
  }
  double stop_ms() override {
    const double raw = number(m_last.sample, "ms");
    // A traced call's kernel sum may lie far below its wall time: no clock bounds it from below.
    const timing::call_charge c =
        trace_next ? timing::call_charge{raw, 0} : timing::charge_call(raw, m_last.bracket_ms, m_options.go);
    m_raw.push_back(raw);
    m_charges.push_back(c.charge_ms);
    m_brackets.push_back(m_last.bracket_ms);
    return c.credited_ms;
  }

  // Of the last `n` calls (the samples, after the warmup).
  json handshake(std::size_t n) const {
    const std::size_t from = m_raw.size() > n ? m_raw.size() - n : 0;
    const std::vector<double> raw(m_raw.begin() + static_cast<std::ptrdiff_t>(from), m_raw.end());
    const std::vector<double> charges(m_charges.begin() + static_cast<std::ptrdiff_t>(from), m_charges.end());
    const timing::calls_check check = timing::check_calls(raw, charges, m_options.go);
    json out{{"allowance_ms", m_options.go.allowance_ms},
             {"calibration_ms", m_options.calibration},
             {"floor_ms", m_options.go.floor_ms},
             {"median_ms", m_options.go.median_ms},
             {"calibrated", m_options.go.calibrated},
             {"max_gain_ms", m_options.go.max_gain_ms()},
             {"charged_calls", check.charged},
             {"median_charge_ms", check.median_charge_ms},
             {"total_charge_ms", check.total_charge_ms},
             {"runner_samples_ms", raw},
             {"brackets_ms",
              std::vector<double>(m_brackets.begin() + static_cast<std::ptrdiff_t>(from), m_brackets.end())}};
    if (check.systematic) out["systematic"] = check.reason;
    return out;
  }
  double fastest_draw() const {
    return m_draws.empty() ? 0 : *std::min_element(m_draws.begin(), m_draws.end());
  }

private:
  runner_link& m_runner;
  const driven_options& m_options;
  driven_result& m_out;
  runner_link::go_reply m_last;
  std::vector<double> m_raw, m_charges, m_brackets, m_draws, m_prepares;
};

} // namespace

std::pair<timing::handshake_bound, timing::handshake_bound> handshake_bounds(const runner_link& runner) {
  const auto& c = runner.handshake_calibration();
  return {timing::bound_of_handshake(c.go_ms), timing::bound_of_handshake(c.prepare_ms)};
}

namespace {

// KernelBench main's cuda_event protocol (docs/cuda-timing.md): 3 warmups, empty_cache, 1 discarded and 100
// reported trials each after a 256 MB flush; on the host 4 warmups and 100 trials (the old host counts).
timing::measurement kernelbench_loop(runner_link& runner, remote_subject& subject, bool cuda) {
  timing::measurement m;
  subject.flush_next = false;
  const int warmups = cuda ? 3 : 4;
  for (int i = 0; i < warmups; ++i) {
    subject.prepare();
    subject.call();
    subject.stop_ms();
  }
  if (cuda) checked_reply(runner.request({{"op", "tc"}}));
  subject.flush_next = true;
  for (int trial = 0; trial < (cuda ? 101 : 100); ++trial) {
    subject.prepare();
    subject.call();
    const double ms = subject.stop_ms();
    if (!cuda || trial > 0) m.samples_ms.push_back(ms);
  }
  m.warmup_calls = static_cast<std::size_t>(warmups);
  m.stop_reason = "fixed_trials";
  return m;
}

// CUDA Agent's released timing: 5 warmups, then 10 calls each traced alone (the sample: its summed kernels).
timing::measurement cuda_agent_loop(remote_subject& subject) {
  timing::measurement m;
  subject.flush_next = false;
  for (int i = 0; i < 15; ++i) {
    subject.trace_next = i >= 5;
    subject.prepare();
    subject.call();
    const double ms = subject.stop_ms();
    if (subject.trace_next) m.samples_ms.push_back(ms);
  }
  m.warmup_calls = 5;
  m.stop_reason = "fixed_count";
  return m;
}

} // namespace

driven_result drive_round(runner_link& runner, const driven_options& options) {
  driven_result out;
  const std::string& method = options.spec.method;
  const bool fixed_counts = method == "kernelbench" || (method == "cuda-agent" && options.cuda);
  json begin{{"op", "tb"},
             {"subject", options.subject},
             {"slots", options.slots},
             {"slot_bytes", options.slot_bytes}};
  if (!options.fixed.is_null()) begin["fixed"] = options.fixed;
  if (options.cpu >= 0) begin["cpu"] = options.cpu;
  if (method == "kernelbench" && options.cuda) begin["flush_bytes"] = 256ull << 20; // KernelBench's dummy
  const json begun = checked_reply(runner.request(begin));
  timing::host_probe& probe = process_host_probe(); // the host's speed before and after, as for every timing
  const timing::host_probe_result probe_before = probe.measure();
  remote_subject subject(runner, options, out);
  const timing::measurement m = method == "kernelbench" ? kernelbench_loop(runner, subject, options.cuda)
                                : fixed_counts
                                    ? cuda_agent_loop(subject)
                                    : timing::measure_cold(subject, measure_params_of(options.spec));
  const json ended = checked_reply(runner.request({{"op", "te"}}));
  if (ended.contains("snapshot") && options.take) options.take(ended["snapshot"]);
  out.flags = ended.value("flags", json::object());
  timing_result& t = out.timed;
  const bool traced = method == "cuda-agent" && options.cuda;
  t.method = fixed_counts || method == "robust" ? method : "robust";
  t.clock = traced ? "cupti-kernel-sum" : options.cuda ? "cuda-event" : "host";
  t.stop_reason = m.stop_reason;
  t.samples_ms = m.samples_ms;
  t.params = options.spec;
  t.params["headline"] = std::string(fixed_counts ? "mean" : "median");
  if (method == "cuda-agent" && !options.cuda)
    t.params["fallback"] = "cuda-agent timing needs a GPU kernel trace";
  t.params["warmup_calls"] = m.warmup_calls;
  t.params["warmup_ms"] = m.warmup_ms;
  t.params[options.cuda ? "l2_flush_bytes" : "llc_flush_bytes"] = begun.value("flush_bytes", 0ull);
  t.params["driven"] = true;
  if (begun.contains("cpu_pinned")) t.params["cpu_pinned"] = begun["cpu_pinned"];
  record_host_probes({probe_before, probe.measure()}, t.params);
  t.params["handshake"] = subject.handshake(m.samples_ms.size());
  if (traced) t.params["handshake"]["unbounded"] = "kernel sums: no clock bounds them from below";
  out.draw_ms = subject.fastest_draw();
  // The runner's count is its word; the judge's own is what it checks the snapshots against.
  if (options.subject == "candidate" && ended.value("calls", -1L) != out.calls)
    throw runner_failure("runtime_error", fmt::format("the candidate's process counted {} timed calls, the "
                                                      "judge made {}",
                                                      ended.value("calls", -1L), out.calls));
  return out;
}

} // namespace kj::worker
