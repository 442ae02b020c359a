// The worker's main: read the job, start Python, dispatch on the job's mode, report a verdict on any failure.
#include "engine/worker/worker.hpp"

#include "engine/exec/messages.hpp"
#include "engine/exec/sandbox.hpp"
#include "engine/worker/baseline.hpp"
#include "engine/worker/channel.hpp"
#include "engine/worker/judge_evaluation.hpp"
#include "engine/worker/python_env.hpp"
#include "engine/worker/runner_pool.hpp"
#include "engine/worker/support.hpp"

#include <cstdio>
#include <cstdlib>
#include <fmt/core.h>
#include <fstream>
#include <optional>
#include <sys/resource.h>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// The most resident memory this process has used so far (Python and torch imported).
std::uint64_t peak_rss_bytes() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

exec::job read_job(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read job file " + path.string());
  return exec::job_from_json(json::parse(in));
}

void describe_problems(const exec::describe_job& job, py::module_& runtime, result_channel& channel) {
  for (const auto& file : job.problems) {
    json event{{"type", "problem"}, {"path", file.path}};
    try {
      event["description"] = to_json(py::module_::import("kj_info").attr("describe_problem")(
          file.path, file.source, job.overrides, job.cost));
    } catch (py::error_already_set& e) {
      event["error"] = python_error_text(runtime, e);
    } catch (const std::exception& e) {
      event["error"] = e.what();
    }
    channel.emit(event);
  }
}

// "audit": one "audit" event per item, by index: the record kj_audit.audit_problem returns, or the error that
// stopped it (the problem's own: its import, get_inputs or Model raised). On CUDA the worker ends after an
// error.
void audit_problems(const exec::audit_job& job, py::module_& runtime, result_channel& channel) {
  py::object protocol = py::module_::import("json").attr("loads")(json(job.protocol).dump());
  py::object audit = py::module_::import("kj_audit").attr("audit_problem");
  for (std::size_t i = 0; i < job.items.size(); ++i) {
    const auto& item = job.items[i];
    json event{{"type", "audit"}, {"index", i}};
    try {
      py::object overrides = py::module_::import("json").attr("loads")(json(item.overrides).dump());
      event["audit"] =
          to_json(audit(item.problem.path, item.problem.source, overrides, py_device(job.device), protocol));
    } catch (py::error_already_set& e) {
      event["error"] = python_error_text(runtime, e);
    } catch (const std::exception& e) {
      event["error"] = e.what();
    }
    channel.emit(event);
    // A failure on the GPU may leave a sticky CUDA error behind: a fresh worker audits the next problem.
    if (event.contains("error") && job.device == device_kind::cuda) return;
  }
}

// "read_parquet": a "table" event (row count, columns), one "row" event per selected row ({index, code, ops},
// plus name and id when the file has such columns), then verdict "ok"; or a verdict naming what went wrong.
void read_parquet(const exec::read_parquet_job& job, py::module_& runtime, result_channel& channel) {
  try {
    py::object rows = py::module_::import("json").attr("loads")(json(job.rows).dump());
    const json table = to_json(py::module_::import("kj_sources").attr("read_ops_table")(job.path, rows));
    channel.emit({{"type", "table"}, {"rows", table["rows"]}, {"columns", table["columns"]}});
    for (const auto& row : table["selected"]) {
      json event = row;
      event["type"] = "row";
      channel.emit(event);
    }
    channel.emit({{"type", "verdict"}, {"verdict", "ok"}, {"error", ""}});
  } catch (py::error_already_set& e) {
    channel.emit(
        {{"type", "verdict"}, {"verdict", verdict_of(runtime, e)}, {"error", python_error_text(runtime, e)}});
  } catch (const std::exception& e) {
    channel.emit({{"type", "verdict"}, {"verdict", "harness_error"}, {"error", e.what()}});
  }
}

// "precompile": kj's precompiled torch/extension.h (kj_info.make_precompiled_header), then verdict "ok" with
// the variants the compiler took ("used") and what failed ("errors"); or a verdict naming what went wrong.
void precompile(const exec::precompile_job& job, py::module_& runtime, result_channel& channel) {
  try {
    py::object variants = py::module_::import("json").attr("loads")(json(job.variants).dump());
    const json made =
        to_json(py::module_::import("kj_info").attr("make_precompiled_header")(job.folder, variants));
    channel.emit({{"type", "verdict"},
                  {"verdict", "ok"},
                  {"error", ""},
                  {"used", made["used"]},
                  {"errors", made["errors"]}});
  } catch (py::error_already_set& e) {
    channel.emit(
        {{"type", "verdict"}, {"verdict", verdict_of(runtime, e)}, {"error", python_error_text(runtime, e)}});
  } catch (const std::exception& e) {
    channel.emit({{"type", "verdict"}, {"verdict", "harness_error"}, {"error", e.what()}});
  }
}

// One job of a serving judge: the evaluation, then back to a fresh judge's state, on the job's clock (kj's
// own time: the orchestrator's deadline moves by it). `clock`: the first job's, started before the judge
// imported torch; null: made here.
void serve_one(const std::filesystem::path& path, std::shared_ptr<judge_clock> clock, runner_pool& pool,
               py::module_& runtime, result_channel& channel) {
  exec::job job;
  try {
    job = read_job(path);
  } catch (const std::exception& e) {
    channel.emit(
        {{"type", "verdict"}, {"verdict", "crashed"}, {"error", fmt::format("worker: {}", e.what())}});
    return;
  }
  const auto* evaluation = std::get_if<exec::evaluate_job>(&job);
  if (!evaluation) {
    channel.emit({{"type", "verdict"},
                  {"verdict", "harness_error"},
                  {"error", "worker: a serving judge runs evaluations only"}});
    return;
  }
  if (!clock) clock = start_clock(*evaluation, channel);
  channel.emit({{"type", "hello"}});
  evaluate(*evaluation, nullptr, clock, runtime, channel, &pool);
  try {
    py::module_::import("kj_judge").attr("between_jobs")();
  } catch (py::error_already_set& e) { // the next job's judge would not start as a fresh one: end here
    throw std::runtime_error("between jobs: " + python_error_text(runtime, e));
  }
}

} // namespace

int serve_evaluations(const worker_options& options) {
  result_channel channel(options.result_fd);
  FILE* jobs = ::fdopen(options.jobs_fd, "r");
  if (!jobs) return 2;
  const auto next_path = [jobs]() -> std::optional<std::string> {
    char* line = nullptr;
    std::size_t capacity = 0;
    const ssize_t n = ::getline(&line, &capacity, jobs);
    std::optional<std::string> path;
    if (n > 0) path.emplace(line, static_cast<std::size_t>(n));
    std::free(line);
    while (path && !path->empty() && (path->back() == '\n' || path->back() == '\r'))
      path->pop_back();
    return path;
  };
  auto path = next_path(); // the first job comes with the start
  if (!path) exit_without_finalizing(0);
  auto interpreter = start_interpreter();
  const char* scratch = std::getenv("KJ_SCRATCH_DIR");
  runner_pool pool(std::filesystem::path(scratch && *scratch ? scratch : "/tmp") / "runners");
  std::shared_ptr<judge_clock> first_clock; // the first job's time runs from here, as run_worker's does
  try { // its runner imports torch while the judge does (as run_worker's does)
    const exec::job first = read_job(*path);
    if (const auto* evaluation = std::get_if<exec::evaluate_job>(&first)) {
      first_clock = start_clock(*evaluation, channel);
      start_runner_ahead(pool, *evaluation);
    }
  } catch (const std::exception&) { // serve_one reports what is wrong with it
  }
  py::module_ runtime;
  try {
    runtime = import_modules(python_role::judge);
  } catch (py::error_already_set& e) {
    channel.emit({{"type", "verdict"},
                  {"verdict", "crashed"},
                  {"error", fmt::format("the embedded Python cannot import torch: {}", e.what())}});
    return 2;
  }
  for (; path; path = next_path()) {
    try {
      serve_one(*path, std::move(first_clock), pool, runtime, channel);
    } catch (const std::exception& e) { // ends without job_end: the orchestrator starts a fresh judge
      std::fprintf(stderr, "kj worker --serve: %s\n", e.what());
      exit_without_finalizing(3);
    }
    first_clock.reset();
    channel.emit({{"type", "job_end"}});
  }
  exit_without_finalizing(0);
}

int run_worker(const worker_options& options) {
  result_channel channel(options.result_fd);
  // A build's worker runs candidate code: its own uid and gid first (set only for sandboxed jobs).
  if (std::string error; !exec::enter_identity(error)) {
    channel.emit({{"type", "verdict"}, {"verdict", "harness_error"}, {"error", "worker: " + error}});
    return 2;
  }
  exec::job job;
  try {
    job = read_job(options.job_file);
  } catch (const std::exception& e) {
    channel.emit(
        {{"type", "verdict"}, {"verdict", "crashed"}, {"error", fmt::format("worker: {}", e.what())}});
    return 2;
  }
  auto interpreter = start_interpreter();
  std::unique_ptr<runner_link> runner; // an evaluation's runner imports torch while the judge does
  std::shared_ptr<judge_clock> clock;  // and whose time is whose, from the start
  if (const auto* evaluation = std::get_if<exec::evaluate_job>(&job)) {
    clock = start_clock(*evaluation, channel);
    try {
      runner = launch_runner(*evaluation, clock);
    } catch (const std::exception&) { // evaluate() starts it again and reports what fails (Python's too)
    }
  }
  py::module_ runtime;
  try {
    // A build imports the candidate: only the runner's modules are there to see.
    runtime = import_modules(std::holds_alternative<exec::build_job>(job) ? python_role::runner
                                                                          : python_role::judge);
    json hello{{"type", "hello"}};
    if (std::holds_alternative<exec::probe_job>(
            job)) { // the full fingerprint costs subprocesses (nvcc): once
      hello["environment"] = to_json(py::module_::import("kj_info").attr("environment")());
      // What kj's own process needs before any candidate code: a --memory-limit below it is refused.
      hello["environment"]["kj_boot"] = {{"peak_rss_bytes", peak_rss_bytes()}};
    }
    channel.emit(hello);
  } catch (py::error_already_set& e) {
    channel.emit({{"type", "verdict"},
                  {"verdict", "crashed"},
                  {"error", fmt::format("the embedded Python cannot import torch: {}", e.what())}});
    return 2;
  }
  std::visit(
      [&](const auto& message) {
        using T = std::decay_t<decltype(message)>;
        if constexpr (std::is_same_v<T, exec::describe_job>) describe_problems(message, runtime, channel);
        if constexpr (std::is_same_v<T, exec::read_parquet_job>) read_parquet(message, runtime, channel);
        if constexpr (std::is_same_v<T, exec::precompile_job>) precompile(message, runtime, channel);
        if constexpr (std::is_same_v<T, exec::audit_job>) audit_problems(message, runtime, channel);
        if constexpr (std::is_same_v<T, exec::baseline_job>) run_baseline(message, runtime, channel);
        if constexpr (std::is_same_v<T, exec::build_job>) {
          std::string error; // the build imports the candidate: its module code runs here, filtered
          if (exec::have_seccomp() && !exec::install_candidate_seccomp(error)) {
            channel.emit(
                {{"type", "verdict"},
                 {"verdict", "harness_error"},
                 {"phase", "build"},
                 {"error", "the build's process could not install its seccomp filter, so kj does not "
                           "import the candidate: " +
                               error}});
            return;
          }
          build(message, runtime, channel);
        }
        if constexpr (std::is_same_v<T, exec::evaluate_job>)
          evaluate(message, std::move(runner), clock, runtime, channel);
      },
      job);
  exit_without_finalizing(0);
}

} // namespace kj::worker
