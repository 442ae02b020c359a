// Implements run_audit: the problems recorded, one audit worker, each problem's audit stored as it arrives.
#include "planning/orchestrator/audit.hpp"

#include "db/store.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/messages.hpp"
#include "engine/exec/process.hpp"
#include "planning/orchestrator/run.hpp"

#include <chrono>
#include <fmt/core.h>
#include <stdexcept>

using nlohmann::json;

namespace kj::orchestrator {
namespace {

std::string lines(const json& texts) {
  std::string out;
  for (const auto& t : texts)
    out += (out.empty() ? "" : "\n") + t.get<std::string>();
  return out;
}

db::problem_audit_record record_of(const json& event, std::int64_t problem_id, std::int64_t stack_id,
                                   const std::string& device, const std::string& protocol) {
  db::problem_audit_record r{
      .problem_id = problem_id, .stack_id = stack_id, .device = device, .protocol = protocol};
  if (event.contains("error") || !event.contains("audit")) {
    r.error = event.value("error", std::string("the worker reported no audit for this problem"));
    return r;
  }
  const json& a = event["audit"];
  r.unsound = a.value("unsound", false);
  r.stochastic = a.value("stochastic", false);
  r.constant_reference = a.value("constant", false);
  if (a.contains("tolerance_use") && a["tolerance_use"].is_number())
    r.tolerance_use = a["tolerance_use"].get<double>();
  r.reasons = lines(a.value("reasons", json::array()));
  r.notes = lines(a.value("notes", json::array()));
  r.nulls_json = a.value("nulls", json::object()).dump();
  return r;
}

} // namespace

audit_outcome run_audit(const audit_options& options, std::string& device) {
  db::store store = db::store::open(options.db_path);
  const json env = probe_environment(options.cache_dir);
  const device_kind kind = resolve_device(options.device, env);
  check_precision_device(options.precision, kind);
  device = to_string(kind);
  const std::int64_t stack_id = store.upsert_stack(stack_from(env, kind));
  const std::vector<std::int64_t> problem_ids = record_problems(store, options.problems);

  // One protocol for the job: the first problem's KernelBench version (a source has one).
  const std::string kb_version = options.problems.empty() ? "main" : options.problems.front().kb_version;
  const exec::protocol_spec protocol =
      exec::make_protocol(options.protocol, kb_version.empty() ? "main" : kb_version, options.precision);

  std::vector<audited_problem> audited;
  const exec::job_runner runner{options.cache_dir, false};
  const auto started = std::chrono::steady_clock::now();
  const auto store_one = [&](std::size_t i, db::problem_audit_record r) {
    r.id = store.insert_problem_audit(r); // stored as it arrives: a killed audit keeps what it finished
    audited.push_back({&options.problems[i], r, json::parse(r.nulls_json.empty() ? "{}" : r.nulls_json)});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    fmt::print(stderr, "kj: audited {} ({} of {}, {:.0f} s)\n", options.problems[i].key(), audited.size(),
               options.problems.size(), s);
  };
  // A worker that stops early (a crash, or a problem that failed on the GPU, whose CUDA error is sticky) is
  // replaced by a fresh one from the next problem; the problem it died on is recorded as an error.
  exec::install_interrupt_handlers(); // Ctrl-C or SIGTERM ends the audit with what it finished
  std::size_t next = 0;
  int silent = 0;
  while (next < options.problems.size() && !exec::interrupt_requested()) {
    exec::audit_job job{.device = kind, .protocol = protocol};
    for (std::size_t i = next; i < options.problems.size(); ++i)
      job.items.push_back({{options.problems[i].path.string(), options.problems[i].source},
                           options.problems[i].overrides_for(device, options.overrides)});
    const std::size_t base = next;
    bool last_was_error = false;
    const auto on_event = [&](const json& e) {
      if (e.value("type", "") != "audit") return;
      const std::size_t i = base + e.value("index", std::size_t{0});
      if (i < next || i >= options.problems.size()) return;
      store_one(i, record_of(e, problem_ids[i], stack_id, device, protocol.name));
      last_was_error = e.contains("error");
      next = i + 1;
    };
    std::string tail;
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000));
    const auto outcome = runner.run(job, {.name = "audit", .timeout = timeout}, &tail, on_event);
    if (next >= options.problems.size()) break;
    // Ctrl-C, the whole audit's timeout, or two fresh workers in a row that report nothing (kj's own failure,
    // not a problem's): stop, keeping what was stored.
    silent = next == base ? silent + 1 : 0;
    if (outcome.interrupted || outcome.timed_out || silent >= 2)
      return {std::move(audited),
              fmt::format("the audit worker stopped after {} of {} problems ({}):\n{}", audited.size(),
                          options.problems.size(), exec::describe_exit(outcome), tail)};
    if (last_was_error && next > base) continue; // it stopped after a problem's error: a fresh worker goes on
    db::problem_audit_record died{
        .problem_id = problem_ids[next], .stack_id = stack_id, .device = device, .protocol = protocol.name};
    died.error =
        fmt::format("the audit worker died on this problem ({}):\n{}", exec::describe_exit(outcome), tail);
    store_one(next, died);
    ++next;
  }
  if (next < options.problems.size())
    return {std::move(audited),
            fmt::format("interrupted after {} of {} problems", audited.size(), options.problems.size())};
  return {std::move(audited), ""};
}

} // namespace kj::orchestrator
