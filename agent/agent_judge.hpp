// The agent's way to the engine: builds, evaluations and Nsight Compute runs through evaluate() (the
// sandboxed judge/runner worker pair), one device job at a time per device slot, shared by every trajectory
// of a run.
#pragma once

#include "adapters/candidates.hpp"
#include "agent/ncu.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/evaluate.hpp"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kj::agent {

// What one forward of a problem costs at least (the describe job's meta-device forward).
struct problem_cost {
  std::optional<std::int64_t> input_bytes, parameter_bytes, output_bytes, flops;
  std::string error;                         // why there is no estimate ("" when there is one)
  std::vector<std::string> inputs;           // forward's arguments, e.g. "float32[256, 4096]"
  std::optional<std::int64_t> bytes() const; // inputs + parameters + outputs
};

struct judge_settings {
  orchestrator::evaluate_options evaluate; // device resolved, env probed, timing, protocol, cache_dir, ...
  std::vector<int> gpus;                   // cuda: the device slots (default: GPU 0)
  std::string ncu;                         // Nsight Compute's executable; "" none
  int ncu_launches = 24;                   // kernel launches ncu profiles per run
};

class judge {
public:
  explicit judge(judge_settings settings);

  const std::string& device() const { return m_settings.evaluate.device; }
  const judge_settings& settings() const { return m_settings; }

  // The candidate's build (none when it compiles nothing). On the CPU a build holds the device, so that no
  // compiler shares the machine with a timing.
  std::optional<exec::build_record> build(const kb::problem& problem, const adapters::candidate& candidate);
  // Correctness only (compatible and strict verdicts, no timing).
  results::evaluation_result verify(const kb::problem& problem, const adapters::candidate& candidate);
  // Correctness and timing, the kernel trace on a GPU: what `kj run` does. A fresh worker and fresh timing
  // inputs every time, so this is also the re-measurement. `strict` false: the compatible verdict only (the
  // reference profiled as its own candidate, whose strict verdict tells nothing).
  results::evaluation_result profile(const kb::problem& problem, const adapters::candidate& candidate,
                                     bool strict = true);
  // Nsight Compute over one untimed evaluation; nullopt when there is no ncu.
  std::optional<ncu_report> nsight(const kb::problem& problem, const adapters::candidate& candidate);
  // The problem's cost (a describe job; cached per problem and sizes).
  problem_cost cost(const kb::problem& problem);

private:
  class slot_guard;
  int acquire();
  void release(int slot);
  results::evaluation_result run(const kb::problem& problem, const adapters::candidate& candidate,
                                 orchestrator::evaluate_options options);

  judge_settings m_settings;
  std::mutex m_lock;
  std::condition_variable m_free;
  std::vector<int> m_idle; // device slots (GPU indices; one "0" on the CPU) not in use
  std::map<std::string, problem_cost> m_costs;
};

} // namespace kj::agent
