// Implements load_all_problems: the file-based sources in C++, CUDA-Agent-Ops-6K's parquet file in a worker.
#include "planning/orchestrator/problem_sources.hpp"

#include "engine/exec/job_runner.hpp"
#include "engine/exec/process.hpp"
#include "planning/orchestrator/verified_problems.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/core.h>
#include <stdexcept>
#include <tuple>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {
namespace {

// --ids is passed to the worker as row numbers; rows past this one cannot be selected (the file has 6,000).
constexpr int max_selectable_row = 1 << 20;

bool other_sources(const kb::source_options& options) {
  return options.builtin || !options.kernelbench_dir.empty() || !options.files.empty();
}

std::vector<kb::problem> load_ops6k(const kb::source_options& options, const fs::path& cache_dir) {
  const fs::path path = fs::absolute(options.ops6k_path);
  if (!fs::is_regular_file(path))
    throw kb::source_error(fmt::format("--ops6k {}: no such file (expected CUDA-Agent-Ops-6K's parquet file)",
                                       options.ops6k_path.string()));
  exec::read_parquet_job job;
  job.path = path.string();
  if (!options.ids.empty())
    for (int row = 1; row <= max_selectable_row; ++row)
      if (options.ids.contains(row)) job.rows.push_back(row);

  const exec::job_runner runner{cache_dir, false};
  std::string tail;
  const exec::worker_outcome outcome = runner.run(job, {.name = "read-ops6k"}, &tail);
  const json* verdict = exec::find_event(outcome, "verdict");
  if (!verdict)
    throw std::runtime_error(fmt::format("the worker reading {} ended without a result ({}){}{}",
                                         path.string(), exec::describe_exit(outcome),
                                         tail.empty() ? "" : ":\n", tail));
  if (verdict->value("verdict", "") == "source_error") throw kb::source_error(verdict->value("error", ""));
  if (verdict->value("verdict", "") != "ok")
    throw std::runtime_error(
        fmt::format("reading {} failed: {}", path.string(), verdict->value("error", "")));

  std::vector<kb::problem> problems;
  for (const auto& e : outcome.events) {
    if (e.value("type", "") != "row") continue;
    kb::problem p;
    p.suite = ops6k_suite;
    p.kb_version = options.kb_version;
    p.level = 0;
    p.number = e.value("index", 0);
    std::optional<std::string> name;
    if (e.contains("name")) name = e["name"].get<std::string>();
    p.name = ops6k_problem_name(e.value("ops", std::vector<std::string>{}), name);
    p.file_name = fmt::format("{}_{}.py", p.number, p.name);
    p.path =
        fs::path(fmt::format("{}#row={}", path.string(), p.number)); // errors name the row, not only the file
    p.source = e.value("code", "");
    problems.push_back(std::move(p));
  }
  if (problems.empty()) {
    const json* table = find_event(outcome, "table");
    const long long rows = table ? table->value("rows", 0LL) : 0;
    throw kb::source_error(rows == 0
                               ? fmt::format("{} has no rows", path.string())
                               : fmt::format("--ids selects none of the {} rows of {} (rows are numbered "
                                             "from 1)",
                                             rows, path.string()));
  }
  return problems;
}

} // namespace

std::string ops6k_problem_name(const std::vector<std::string>& ops, const std::optional<std::string>& name) {
  std::string raw;
  if (name && !name->empty()) {
    raw = *name;
  } else {
    for (const auto& op : ops)
      raw += (raw.empty() ? "" : "_") + op;
  }
  std::string out;
  for (const char c : raw) {
    const bool word = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (word)
      out += c;
    else if (!out.empty() && out.back() != '_')
      out += '_';
  }
  if (out.size() > 60) out.resize(60);
  while (!out.empty() && out.back() == '_')
    out.pop_back();
  return out.empty() ? "row" : out;
}

static std::vector<kb::problem> load_sources(const kb::source_options& options, const fs::path& cache_dir) {
  if (options.ops6k_path.empty()) return kb::load_problems(options);
  std::vector<kb::problem> problems;
  if (other_sources(options)) {
    // The other sources alone may match none of --ids (they select rows of the parquet file): filter here.
    kb::source_options others = options;
    others.ops6k_path.clear();
    others.ids = {};
    problems = kb::load_problems(others);
    std::erase_if(problems, [&](const kb::problem& p) {
      return p.suite != "file" && !options.ids.empty() && !options.ids.contains(p.number);
    });
  }
  for (auto& p : load_ops6k(options, cache_dir))
    problems.push_back(std::move(p));
  std::sort(problems.begin(), problems.end(), [](const kb::problem& a, const kb::problem& b) {
    return std::tie(a.suite, a.level, a.number, a.file_name) <
           std::tie(b.suite, b.level, b.number, b.file_name);
  });
  return problems;
}

std::vector<kb::problem> load_all_problems(const kb::source_options& options, const fs::path& cache_dir) {
  std::vector<kb::problem> problems = load_sources(options, cache_dir);
  if (options.problem_set == "verified") problems = keep_verified(std::move(problems), options);
  return problems;
}

} // namespace kj::orchestrator
