// Baselines: each problem's own Model, eager or under torch.compile, timed with the candidates' timer and
// method on the same inputs, cached in the DB per key (problem, sizes, precision, mode, timing, stack).
#pragma once

#include "core/precision.hpp"
#include "core/protocol.hpp"
#include "db/store.hpp"
#include "engine/exec/messages.hpp"
#include "engine/scheduler/scheduler.hpp"
#include "kernelbench/problems.hpp"
#include "planning/orchestrator/judging_settings.hpp"
#include "planning/results/sinks.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kj::baselines {

// Every mode, in report order; the default set leaves out reduce-overhead (on request only).
inline const std::vector<std::string> all_modes{"eager", "compile-default", "max-autotune",
                                                "max-autotune-no-cudagraphs", "reduce-overhead"};
inline const std::vector<std::string> default_modes{"eager", "compile-default", "max-autotune",
                                                    "max-autotune-no-cudagraphs"};

// Parses "eager,compile-default" (or "all", "default"); throws kb::source_error naming a bad entry.
std::vector<std::string> parse_modes(const std::string& list);

// What a baseline measurement depends on; cache_key() hashes exactly these fields.
struct key_fields {
  std::string problem_source_hash;
  std::map<std::string, std::int64_t> overrides; // the module-constant overrides the job gets
  kj::precision precision = kj::precision::fp32;
  std::string mode;
  std::string device;
  std::uint64_t seed = 42;
  bool eval_mode = false;   // the protocol's: BatchNorm and Dropout behave differently
  exec::timing_spec timing; // only the fields that shape a baseline's samples are hashed
  std::string stack_hash;
};
nlohmann::json key_json(const key_fields& key);
std::string cache_key(const nlohmann::json& key_json);

// Whether a cached row answers a request: statuses that may be transient (crashed, harness_error, not_run)
// do not,
// nor a timeout recorded under a shorter time limit than `timeout_s`.
bool usable(const db::baseline_record& cached, double timeout_s);

struct options {
  std::vector<std::string> modes = default_modes;
  device_kind device = device_kind::cpu;
  kj::protocol_kind protocol = kj::protocol_kind::kernelbench;
  kj::precision precision = kj::precision::fp32;
  exec::timing_spec timing;
  std::map<std::string, std::int64_t> overrides; // the user's --set
  bool refresh = false;                          // measure again even when a cached row matches
  double timeout_s = 600;                        // per worker (compile included)
  bool measure_missing = true; // false: only look up cached rows (what `kj run --baselines cached` does)
};

// The settings a baseline shares with the candidates it is compared with (protocol, precision, timing, --set,
// the job's timeout): the one place `kj run` and `kj agent` derive them from their judging settings.
options options_for(const orchestrator::judging_settings& judging, device_kind device);

struct problem_ref {
  const kb::problem* problem = nullptr;
  std::int64_t problem_id = 0;
};

struct result {
  const kb::problem* problem = nullptr;
  std::string mode;
  db::baseline_record record; // as stored (id set)
  bool cached = false;        // found in the DB, not measured now
};

struct stack_ref {
  std::int64_t id = 0;
  std::string hash;
  std::string hardware; // GPU or CPU name
};

// Makes sure every (problem, mode) has a baseline: cached rows are reused (unless refresh); missing ones are
// compiled on the scheduler's build pool first (warming the Inductor cache), then timed on its device slots,
// up to 8 problems per worker. Every row, cached or measured, goes to `sink` as it is known (the DB sink
// writes the measured ones and sets their ids); all of them are returned. Stops early when the user
// interrupts.
std::vector<result> ensure(db::store& store, const scheduler::scheduler& runner,
                           const std::vector<problem_ref>& problems, const stack_ref& stack,
                           const options& opts, results::result_sink& sink);

// KernelBench's results/timing JSON files ({"level1": {"<file>.py": {mean, std, min, max, num_trials,
// hardware, device}}}), from a file or a folder of them (searched recursively), imported as rows with origin
// "imported"; the mode comes from the file name (baseline_time_torch.json: eager;
// ..._torch_compile_inductor_<mode>.json: that mode). Rows already imported are skipped.
struct import_summary {
  int files = 0, imported = 0, skipped = 0, matched_problems = 0;
};
import_summary import_kernelbench_json(db::store& store, const std::filesystem::path& path,
                                       const std::string& hardware_label = "");

// The mode a KernelBench timing file holds, or "" when the name is not one of theirs.
std::string mode_of_kernelbench_file(const std::string& file_name);

} // namespace kj::baselines
