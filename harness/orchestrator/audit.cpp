// Implements run_audit: the problems recorded, one audit worker, each problem's audit stored as it arrives.
#include "harness/orchestrator/audit.hpp"

#include "db/store.hpp"
#include "harness/exec/job_runner.hpp"
#include "harness/exec/messages.hpp"
#include "harness/exec/process.hpp"
#include "harness/orchestrator/run.hpp"

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

std::vector<audited_problem> run_audit(const audit_options& options, std::string& device) {
  db::store store = db::store::open(options.db_path);
  const json env = probe_environment(options.cache_dir);
  const device_kind kind = resolve_device(options.device, env);
  device = to_string(kind);
  const std::int64_t stack_id = store.upsert_stack(stack_from(env, kind));
  const std::vector<std::int64_t> problem_ids = record_problems(store, options.problems);

  exec::audit_job job{.device = kind};
  for (const auto& p : options.problems)
    job.items.push_back({{p.path.string(), p.source}, p.overrides_for(device, options.overrides)});
  // One protocol for the job: the first problem's KernelBench version (a source has one).
  const std::string kb_version = options.problems.empty() ? "main" : options.problems.front().kb_version;
  job.protocol =
      exec::make_protocol(options.protocol, kb_version.empty() ? "main" : kb_version, options.precision);

  std::vector<audited_problem> audited;
  const exec::job_runner runner{options.cache_dir, false};
  std::string tail;
  const auto on_event = [&](const json& e) {
    if (e.value("type", "") != "audit") return;
    const std::size_t i = e.value("index", std::size_t{0});
    if (i >= options.problems.size()) return;
    db::problem_audit_record r = record_of(e, problem_ids[i], stack_id, device, job.protocol.name);
    r.id = store.insert_problem_audit(r); // stored as it arrives: a killed audit keeps what it finished
    audited.push_back({&options.problems[i], r, json::parse(r.nulls_json.empty() ? "{}" : r.nulls_json)});
    fmt::print(stderr, "kj: audited {} ({} of {})\n", options.problems[i].key(), audited.size(),
               options.problems.size());
  };
  const auto outcome =
      runner.run(job,
                 {.name = "audit",
                  .timeout = std::chrono::milliseconds(static_cast<std::int64_t>(options.timeout_s * 1000))},
                 &tail, on_event);
  if (audited.size() < options.problems.size())
    throw std::runtime_error(fmt::format("the audit worker stopped after {} of {} problems ({}):\n{}",
                                         audited.size(), options.problems.size(),
                                         exec::describe_exit(outcome), tail));
  return audited;
}

} // namespace kj::orchestrator
