// Implements the setup of `kj run`: imported candidates, the -k filter, creating or resuming the run, and the
// guard that marks a failed setup.
#include "planning/orchestrator/run_setup.hpp"

#include "core/hashing.hpp"
#include "core/version.hpp"
#include "engine/exec/sandbox.hpp"
#include "planning/orchestrator/run_config.hpp"
#include "planning/orchestrator/shard.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {
namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

// Files of the folder that name no selected problem: one line for those of another level or id (a subset of
// the suite was selected), each one for a name kj does not understand (a mistake worth seeing).
void report_skipped(const adapters::import_report& report, const fs::path& dir) {
  for (const auto& s : report.skipped)
    fmt::print(stderr, "kj: skipping {}\n", s);
  if (const std::size_t n = report.unselected.size(); n > 0)
    fmt::print(stderr, "kj: {} file{} in {} name{} problems not selected (e.g. {}): skipped\n", n,
               n == 1 ? "" : "s", dir.string(), n == 1 ? "s" : "", report.unselected.front());
}

json parse_config(const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json::object();
  }
}

} // namespace

std::vector<adapters::candidate> import_candidates(const run_inputs& inputs,
                                                   const std::vector<kb::problem>& problems,
                                                   const std::string& device) {
  const std::string& producer = inputs.producer;
  std::string which = inputs.candidates;
  if (which.empty()) {
    const kb::source_options& sources = inputs.sources;
    const bool only_builtin = sources.builtin && sources.kernelbench_dir.empty() && sources.files.empty() &&
                              sources.ops6k_path.empty();
    if (!only_builtin)
      throw kb::source_error("no candidates given: pass --candidates DIR (KernelBench-style files) or "
                             "--candidates identity");
    which = "examples";
  }
  if (which == "identity") {
    auto candidates = adapters::identity_candidates(problems);
    for (auto& c : candidates)
      c.producer = producer;
    return candidates;
  }
  const fs::path dir = which == "examples" ? adapters::examples_dir(device) : fs::path(which);
  auto report = adapters::candidates_from_directory(dir, problems, producer);
  report_skipped(report, dir);
  if (report.candidates.empty())
    throw kb::source_error(fmt::format("no candidate in {} matches the selected problems", dir.string()));
  for (const auto& c : report.candidates)
    if (!c.encoding_note.empty())
      fmt::print(stderr, "kj: warning: {}: {} (its bytes are kept in candidates.source_bytes)\n",
                 c.path.string(), c.encoding_note);
  return std::move(report.candidates);
}

bool matches_filter(const std::string& pattern, const kb::problem& p, const adapters::candidate& c) {
  if (pattern.empty()) return true;
  const std::string needle = lower(pattern);
  for (const std::string& name :
       {fmt::format("L{}/{}", p.level, p.file_name), c.path.filename().string(), c.producer})
    if (lower(name).find(needle) != std::string::npos) return true;
  return false;
}

std::vector<adapters::candidate> filter_candidates(const std::string& pattern,
                                                   const std::vector<kb::problem>& problems,
                                                   std::vector<adapters::candidate> candidates) {
  if (pattern.empty()) return candidates;
  const std::size_t total = candidates.size();
  std::erase_if(candidates, [&](const adapters::candidate& c) {
    return !matches_filter(pattern, problems[c.problem_index], c);
  });
  if (candidates.empty())
    throw kb::source_error(fmt::format("-k {}: none of the {} candidates matches (it is matched against "
                                       "L<level>/<problem file>, the candidate's file name and its producer)",
                                       pattern, total));
  fmt::print(stderr, "kj: -k {}: {} of {} candidates\n", pattern, candidates.size(), total);
  return candidates;
}

std::vector<kb::problem> filter_problems(const std::string& pattern, std::vector<kb::problem> problems,
                                         const std::string& producer) {
  const std::string needle = lower(pattern);
  if (pattern.empty() || lower(producer).find(needle) != std::string::npos) return problems;
  const std::size_t total = problems.size();
  std::erase_if(problems, [&](const kb::problem& p) {
    return lower(fmt::format("L{}/{}", p.level, p.file_name)).find(needle) == std::string::npos;
  });
  if (problems.empty())
    throw kb::source_error(
        fmt::format("-k {}: none of the {} problems matches (L<level>/<problem file>)", pattern, total));
  fmt::print(stderr, "kj: -k {}: {} of {} problems\n", pattern, problems.size(), total);
  return problems;
}

run_handle open_run(db::store& store, const run_inputs& inputs, const std::string& run_uid,
                    const json& config, const std::string& device, std::int64_t stack_id) {
  const auto existing = store.find_run(run_uid);
  if (!existing) {
    const std::int64_t id =
        store.create_run({run_uid, "", "running", device, inputs.command_line, version_string(),
                          config.dump(), stack_id, inputs.producer, ""});
    fmt::print(stderr, "kj: run {} (in {}; resume it with kj run --run-id {} and the same options)\n",
               run_uid, inputs.db_path.string(), run_uid);
    return {id, run_uid, true};
  }
  const db::run_record run = store.get_run(*existing).value();
  check_resumed_shard(run, inputs.part, !store.run_parts(*existing).empty());
  json stored = parse_config(run.config_json);
  const auto differences = config_differences(stored, config);
  if (!differences.empty() && !inputs.force)
    throw kb::source_error(fmt::format(
        "--run-id {}: this command's options differ from the run's:\n  {}\nresume with the run's options "
        "(its command line: {}), start a new run (another --run-id), or pass --force to extend the run "
        "with these options (recorded in the run)",
        run_uid, fmt::join(differences, "\n  "), run.command_line));
  // A run still marked running was not ended by its kj (killed, or the machine went down): interrupted.
  const std::string was = run.status == "running" ? "interrupted" : run.status;
  fmt::print(stderr, "kj: resuming run {} ({}{})\n", run_uid, was,
             run.status == "running" ? ": its kj stopped without ending it, e.g. killed" : "");
  if (!differences.empty()) {
    const std::string note = fmt::format("{} --force: {} ({})", core::now_iso8601(),
                                         fmt::join(differences, "; "), inputs.command_line);
    fmt::print(stderr, "kj: --force: the run goes on with: {}\n", fmt::join(differences, "; "));
    stored["forced"].push_back(
        {{"at", core::now_iso8601()}, {"command_line", inputs.command_line}, {"differences", differences}});
    store.set_run_config(*existing, stored.dump());
    store.set_run_detail(*existing, run.detail.empty() ? note : run.detail + "\n" + note);
  }
  store.set_run_status(*existing, "running");
  return {*existing, run_uid, false};
}

run_handle previous_run(const db::store& store, const json& config, const std::string& run_uid) {
  // -k narrows what is rerun; the earlier run may have had another filter, or none.
  json wanted = config;
  wanted.erase("filter");
  const auto runs = store.runs();
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
    if (it->run_uid == run_uid || it->evaluations == 0) continue;
    json stored = parse_config(it->config_json);
    stored.erase("filter");
    if (stored.value("config_version", 1) >= 2 && config_differences(stored, wanted).empty())
      return {it->id, it->run_uid, false};
  }
  throw kb::source_error(
      "--rerun-failed: no earlier run in this DB has this command's options (kj runs lists "
      "the runs and their options)");
}

run_guard::~run_guard() {
  if (!m_released && std::uncaught_exceptions() > 0) fail("kj stopped with an error");
}

void run_guard::fail(const std::string& why) {
  if (m_released) return;
  m_released = true;
  try {
    if (m_run.fresh && m_store.run_is_empty(m_run.id)) {
      m_store.remove_run(m_run.id);
      fmt::print(stderr, "kj: run {} removed: nothing was recorded under it\n", m_run.uid);
      return;
    }
    m_store.set_run_status(m_run.id, "failed");
    m_store.set_run_detail(m_run.id, why);
    fmt::print(stderr,
               "kj: run {} marked failed; resume it with kj run --run-id {} once the cause is fixed\n",
               m_run.uid, m_run.uid);
  } catch (const std::exception& e) { // the DB itself may be what failed
    fmt::print(stderr, "kj: could not mark run {} failed: {}\n", m_run.uid, e.what());
  }
}

// Candidates must not read results or each other: a results DB, a candidates folder or the cache (builds,
// scratch) under a folder the sandbox exposes read-only to them (the system's, Python's) is refused, naming
// both. Without a namespace sandbox every path is readable anyway (a warning says so).
void refuse_exposed(const run_inputs& inputs, const std::vector<fs::path>& exposed) {
  if (exec::sandbox_kind() != "bwrap") return;
  std::vector<std::pair<std::string, fs::path>> mine{
      {"--db", inputs.db_path}, {"the cache folder (--cache-dir, KJ_CACHE_DIR)", inputs.cache_dir}};
  if (const std::string& c = inputs.candidates; !c.empty() && c != "identity" && c != "examples")
    mine.emplace_back("--candidates", c);
  for (const auto& [what, path] : mine)
    if (const fs::path above = exec::exposed_under(path, exposed); !above.empty())
      throw kb::source_error(fmt::format("{} {}: lies under {}, which the candidates' sandbox exposes "
                                         "read-only (a candidate could read it); put it in another folder",
                                         what, path.string(), above.string()));
}

// A limit kj's own start cannot fit in is the user's setup, not a candidate's failure: refused before
// anything is judged, with the probe's measurement (a worker's life: start Python, import torch, report) and
// what to give.
void refuse_limits_below_kj(const judging_settings& judging, const json& env) {
  const json boot = env.value("kj_boot", json::object());
  const double seconds = boot.value("seconds", 0.0);
  // kj's own start twice (a slot's first job starts its judge and the candidate's runner), its own reference
  // work and a margin.
  const double need_s = std::max(10.0, std::ceil(4 * seconds));
  for (const auto& [flag, limit] :
       {std::pair{"--timeout", judging.timeout_s}, {"--build-timeout", judging.build_timeout_s}})
    if (seconds > 0 && limit < need_s)
      throw kb::source_error(fmt::format(
          "{} {:g}: kj's own worker took {:.1f} s to start Python and torch on this machine (measured just "
          "now), and a slot's first job starts two (its judge, warm for the jobs after it, and the "
          "candidate's "
          "runner) before any candidate code runs, "
          "then does kj's own reference work; give at least {:g} seconds (the default is 600)",
          flag, limit, seconds, need_s));
  const double rss_gib = boot.value("peak_rss_bytes", 0.0) / double(1ull << 30);
  // The process limit counts the runner's whole tree: under bubblewrap its two processes and the runner are
  // kj's.
  const int own = exec::sandbox_kind() == "bwrap" ? 3 : 1;
  if (judging.limits.processes < own + 1)
    throw kb::source_error(fmt::format(
        "--process-limit {}: kj's own runner is {} process{} ({}) before the candidate starts any; give at "
        "least {} (the default is {})",
        judging.limits.processes, own, own == 1 ? "" : "es",
        own == 1 ? "the runner" : "bubblewrap's two and the runner", own + 1,
        exec::resource_limits{}.processes));
  const double need_gib = std::ceil(2 * rss_gib * 10) / 10;
  if (const double limit = judging.limits.memory_gib; limit > 0 && rss_gib > 0 && limit < need_gib)
    throw kb::source_error(fmt::format(
        "--memory-limit {:g}: kj's own runner needs about {:.2f} GiB (Python and torch, measured just now) "
        "before a candidate's code runs; give at least {:g} GiB, or 0 for half the machine's memory",
        limit, rss_gib, need_gib));
}

} // namespace kj::orchestrator
