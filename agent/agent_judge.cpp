// Implements the agent's judge: device slots shared by the trajectories, builds, evaluations, ncu, costs.
#include "agent/agent_judge.hpp"

#include "engine/exec/job_runner.hpp"

#include <atomic>
#include <fmt/core.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::agent {

std::optional<std::int64_t> problem_cost::bytes() const {
  if (!input_bytes || !output_bytes) return std::nullopt;
  return *input_bytes + parameter_bytes.value_or(0) + *output_bytes;
}

// Holds a device slot for its lifetime.
class judge::slot_guard {
public:
  explicit slot_guard(judge& j) : m_judge(j), m_slot(j.acquire()) {}
  ~slot_guard() { m_judge.release(m_slot); }
  slot_guard(const slot_guard&) = delete;
  slot_guard& operator=(const slot_guard&) = delete;
  int slot() const { return m_slot; }

private:
  judge& m_judge;
  int m_slot;
};

judge::judge(judge_settings settings) : m_settings(std::move(settings)) {
  if (m_settings.gpus.empty() || device() != "cuda") m_settings.gpus = {0};
  m_idle = m_settings.gpus;
}

int judge::acquire() {
  std::unique_lock lock(m_lock);
  m_free.wait(lock, [this] { return !m_idle.empty(); });
  const int slot = m_idle.back();
  m_idle.pop_back();
  return slot;
}

void judge::release(int slot) {
  {
    std::lock_guard lock(m_lock);
    m_idle.push_back(slot);
  }
  m_free.notify_one();
}

std::optional<exec::build_record> judge::build(const kb::problem& problem,
                                               const adapters::candidate& candidate) {
  if (device() == "cuda") return orchestrator::build(problem, candidate, m_settings.evaluate);
  const slot_guard hold(*this); // CPU: no compiler while another trajectory times
  return orchestrator::build(problem, candidate, m_settings.evaluate);
}

results::evaluation_result judge::run(const kb::problem& problem, const adapters::candidate& candidate,
                                      orchestrator::evaluate_options options) {
  build(problem, candidate); // compiled outside the device slot on a GPU; evaluate() then finds it cached
  const slot_guard hold(*this);
  options.gpu = hold.slot();
  return orchestrator::evaluate(problem, candidate, options);
}

results::evaluation_result judge::verify(const kb::problem& problem, const adapters::candidate& candidate) {
  orchestrator::evaluate_options options = m_settings.evaluate;
  options.judging.timing.enabled = false;
  return run(problem, candidate, options);
}

results::evaluation_result judge::profile(const kb::problem& problem, const adapters::candidate& candidate,
                                          bool strict) {
  orchestrator::evaluate_options options = m_settings.evaluate;
  options.judging.timing.enabled = true;
  options.judging.strict = options.judging.strict && strict;
  return run(problem, candidate, options);
}

std::optional<ncu_report> judge::nsight(const kb::problem& problem, const adapters::candidate& candidate) {
  if (m_settings.ncu.empty() || device() != "cuda") return std::nullopt;
  static std::atomic<unsigned> sequence{0};
  const fs::path cache = exec::cache_dir_or_default(m_settings.evaluate.cache_dir);
  const fs::path dir = cache / "ncu";
  fs::create_directories(dir);
  const fs::path report = dir / fmt::format("agent-{}-{}", ::getpid(), sequence++);
  orchestrator::evaluate_options options = m_settings.evaluate;
  options.judging.timing.enabled = false; // ncu replays each kernel many times: no timing under it
  options.judging.strict = false;
  options.judging.trials = 1;
  options.wrapper = ncu_wrapper(m_settings.ncu, report, m_settings.ncu_launches);
  ncu_report out;
  try {
    const auto result = run(problem, candidate, options);
    if (result.record.verdict != verdict::correct && result.record.verdict != verdict::incorrect)
      out.error = fmt::format("the run under ncu ended {}: {}", name_of(result.record.verdict),
                              result.record.error.substr(0, 600));
    else
      out.kernels = parse_ncu_csv(import_ncu_report(m_settings.ncu, report));
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  std::error_code ec;
  fs::remove(report.string() + ".ncu-rep", ec);
  return out;
}

problem_cost judge::cost(const kb::problem& problem) {
  const auto overrides = problem.overrides_for(device(), m_settings.evaluate.judging.overrides);
  const std::string key = problem.path.string() + json(overrides).dump();
  {
    std::lock_guard lock(m_lock);
    if (auto it = m_costs.find(key); it != m_costs.end()) return it->second;
  }
  const fs::path cache = exec::cache_dir_or_default(m_settings.evaluate.cache_dir);
  exec::describe_job job{{{problem.path.string(), problem.source}}, overrides, true};
  problem_cost cost;
  cost.error = "the describe job reported nothing";
  for (const json& e : exec::job_runner{cache, false}.run(job, {.name = "describe"}).events) {
    if (e.value("type", "") != "problem") continue;
    const json c = e.contains("description") ? e["description"].value("cost", json::object())
                                             : json{{"error", e.value("error", "")}};
    cost.error = c.value("error", "");
    if (e.contains("description"))
      for (const json& input : e["description"].value("inputs", json::array()))
        cost.inputs.push_back(input.contains("shape")
                                  ? fmt::format("{}{}", input.value("dtype", ""), input["shape"].dump())
                                  : input.value("value", "?"));
    const auto field = [&](const char* name) -> std::optional<std::int64_t> {
      if (c.contains(name) && c[name].is_number()) return c[name].get<std::int64_t>();
      return std::nullopt;
    };
    cost.input_bytes = field("input_bytes");
    cost.parameter_bytes = field("parameter_bytes");
    cost.output_bytes = field("output_bytes");
    cost.flops = field("flops");
  }
  std::lock_guard lock(m_lock);
  return m_costs.emplace(key, cost).first->second;
}

} // namespace kj::agent
