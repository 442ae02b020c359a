// Synthetic runs with realistic GPU timing noise for the compare tests, modelled on what docs/methodology.md
// measured on H100/H200s: each process shifts a problem's time (sd 0.4% for GPU-bound forwards, 8% for
// host-bound ones), the candidate and its eager reference in one process share that shift (they agree to
// ~0.2%), samples scatter lognormally (CV 1-3%) with 2% late outliers, and sample counts vary (30-300).
#pragma once

#include "db/rows.hpp"
#include "db/store.hpp"
#include "reports/metrics.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace kj::test::reports {

struct noise_model {
  double process_sd = 0.004;     // per process and problem, shared by candidate and reference
  double subject_sd = 0.002;     // per subject within a process
  double host_process_sd = 0.08; // the same for host-bound problems
  double host_subject_sd = 0.005;
  int host_bound_every = 10; // problems 9, 19, 29, ... are host-bound (GPU busy 50%)
  double outlier_rate = 0.02;
};

inline bool host_bound(int problem, const noise_model& noise) {
  return noise.host_bound_every > 0 && problem % noise.host_bound_every == noise.host_bound_every - 1;
}

// One timed subject of one process: n samples around `ms` (median) with the problem's scatter.
inline std::vector<double> draw_samples(std::mt19937_64& rng, double ms, double cv, int n,
                                        double outlier_rate) {
  std::normal_distribution<double> scatter(0, cv);
  std::uniform_real_distribution<double> u(0, 1), late(1.2, 3.0);
  std::vector<double> out;
  for (int i = 0; i < n; ++i)
    out.push_back(ms * std::exp(scatter(rng)) * (u(rng) < outlier_rate ? late(rng) : 1.0));
  return out;
}

// The evaluation rows of one synthetic run of `problems` identity-like candidates; slowdown[i] multiplies
// problem i's candidate (only) by (1 + slowdown).
inline std::vector<kj::db::evaluation_row> synthetic_rows(int problems, std::uint64_t run_seed,
                                                          const std::string& run, const std::string& stack,
                                                          const std::map<int, double>& slowdown = {},
                                                          const noise_model& noise = {}) {
  std::vector<kj::db::evaluation_row> rows;
  std::mt19937_64 rng(run_seed);
  for (int i = 0; i < problems; ++i) {
    std::mt19937_64 fixed(1000 + static_cast<std::uint64_t>(i)); // the problem's own, the same in every run
    const double true_ms =
        std::exp(std::uniform_real_distribution<double>(std::log(0.02), std::log(20))(fixed));
    const double cv = std::uniform_real_distribution<double>(0.01, 0.03)(fixed);
    const bool host = host_bound(i, noise);
    const double process =
        std::normal_distribution<double>(0, host ? noise.host_process_sd : noise.process_sd)(rng);
    std::normal_distribution<double> subject(0, host ? noise.host_subject_sd : noise.subject_sd);
    const int n = std::uniform_int_distribution<int>(30, 300)(rng);
    const double slow = slowdown.contains(i) ? 1 + slowdown.at(i) : 1.0;
    kj::db::evaluation_row e;
    e.evaluation_id = static_cast<std::int64_t>(i + 1);
    e.run_uid = run;
    e.run_created_at = run;
    e.suite = "kernelbench";
    e.kb_version = "main";
    e.level = 1 + i % 3;
    e.number = i + 1;
    e.problem_name = fmt::format("Problem_{}", i + 1);
    e.problem_file = fmt::format("{}_Problem_{}.py", i + 1, i + 1);
    e.problem_hash = fmt::format("hash{}", i);
    e.producer = "identity";
    e.candidate_hash = fmt::format("cand{}", i);
    e.stack_hash = stack;
    e.device = "cuda";
    e.protocol = "kernelbench-main";
    e.verdict = kj::verdict::correct;
    e.strict_verdict = kj::strict_verdict::pass;
    const auto timing = [&](std::int64_t id, const std::string& name, double factor,
                            const std::string& params) {
      kj::db::timing_row t;
      t.id = id;
      t.subject = name;
      t.method = "robust";
      t.clock = "cuda-event";
      t.params_json = params;
      t.samples_ms = draw_samples(rng, true_ms * factor, cv, n, noise.outlier_rate);
      t.median_ms = kj::reports::stats::compute(kj::reports::stats::statistic::median, t.samples_ms);
      return t;
    };
    const double busy_ms = true_ms * slow * (host ? 0.5 : 0.97); // a slower kernel keeps the GPU busy longer
    e.timings.push_back(
        timing(2 * i + 1, "candidate", (1 + process + subject(rng)) * slow,
               fmt::format(R"({{"headline":"median","trace":{{"busy_ms_per_call":{}}}}})", busy_ms)));
    e.timings.push_back(
        timing(2 * i + 2, "reference_eager", 1 + process + subject(rng), R"({"headline":"median"})"));
    rows.push_back(std::move(e));
  }
  return rows;
}

inline std::vector<kj::reports::result_row> derive_all(const std::vector<kj::db::evaluation_row>& rows) {
  kj::reports::metric_options options;
  options.intervals = false;
  std::vector<kj::reports::result_row> out;
  for (const auto& r : rows)
    out.push_back(kj::reports::derive(r, options));
  return out;
}

// Writes synthetic rows into a DB as run `run` (problems, candidates and the stack are shared by runs).
inline void store_synthetic(kj::db::store& store, const std::vector<kj::db::evaluation_row>& rows,
                            const std::string& run) {
  const auto stack = store.upsert_stack({rows.front().stack_hash, "3.12.3", "2.11.0", "NVIDIA H200", "{}"});
  const auto run_id = store.create_run({run, "", "finished", "cuda", "kj run", "0.1.0", "{}", stack});
  for (const auto& r : rows) {
    const auto problem =
        store.upsert_problem({r.suite, r.kb_version, r.level, r.number, r.problem_name, r.problem_file,
                              "/kb/" + r.problem_file, r.problem_hash, "", ""});
    const auto candidate = store.upsert_candidate({problem, r.producer, 0, "", r.candidate_hash, ""});
    kj::db::evaluation_record e;
    e.run_id = run_id;
    e.candidate_id = candidate;
    e.device = r.device;
    e.overrides_json = r.overrides_json.empty() ? "{}" : r.overrides_json;
    e.protocol = r.protocol;
    e.verdict = r.verdict;
    e.strict_verdict = r.strict_verdict;
    for (const auto& t : r.timings)
      e.timings.push_back(
          {t.subject, t.method, t.clock, t.params_json, t.samples_ms, *t.median_ms, *t.median_ms, 0, 0, 0});
    store.insert_evaluation(e);
  }
}

} // namespace kj::test::reports
