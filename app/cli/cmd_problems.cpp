// `kj problems`: list what a problem source contains, with input shapes and dtypes drawn on the meta device.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "engine/exec/job_runner.hpp"
#include "planning/orchestrator/problem_sources.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <iostream>
#include <memory>

using nlohmann::json;

namespace kj::cli {
namespace {

// The last non-empty line of a Python error (its exception, after the traceback).
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of(" \n");
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

std::string summarize_inputs(const json& inputs) {
  std::string text;
  for (const auto& x : inputs) {
    if (!text.empty()) text += ", ";
    if (x.contains("shape")) {
      std::string dims;
      for (const auto& d : x["shape"])
        dims += (dims.empty() ? "" : "x") + std::to_string(d.get<long long>());
      text += fmt::format("{}[{}]", x.value("dtype", "?"), dims);
    } else {
      text += x.value("value", "?");
    }
  }
  return text;
}

} // namespace

action add_problems_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("problems", "List the problems of a source: level, id, name, input shapes");
  struct state {
    source_flags sources;
    bool no_shapes = false;
    bool cpu_sizes = false;
    std::string format = "table";
  };
  auto s = std::make_shared<state>();
  s->sources.add_to(*cmd);
  cmd->add_flag("--no-shapes", s->no_shapes, "do not start Python to read input shapes");
  cmd->add_flag("--cpu-sizes", s->cpu_sizes, "show the built-in suite's CPU sizes instead of its full sizes");
  cmd->add_option("--format", s->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return [s] {
    const auto problems =
        orchestrator::load_all_problems(s->sources.resolve(), exec::cache_dir_or_default({}));
    const auto overrides = s->sources.overrides_for(problems); // a --set no problem assigns is refused
    std::vector<json> described(problems.size(), json::object());
    if (!s->no_shapes) {
      exec::describe_job job;
      job.overrides = overrides;
      for (const auto& p : problems)
        job.problems.push_back({p.path.string(), p.source});
      // Per-problem overrides (CPU sizes) differ, so those problems are described one worker each.
      if (s->cpu_sizes) job.problems.clear();
      const exec::job_runner runner{exec::cache_dir_or_default({}), false};
      // The worker reports one "problem" event per file, in order: matched by position, since paths are not
      // unique (the rows of an --ops6k file share theirs).
      auto collect = [&](const exec::describe_job& j, std::size_t first) {
        for (const auto& e : runner.run(j, {.name = "describe"}).events)
          if (e.value("type", "") == "problem" && first < described.size()) described[first++] = e;
      };
      if (!job.problems.empty()) collect(job, 0);
      if (s->cpu_sizes)
        for (std::size_t i = 0; i < problems.size(); ++i) {
          const auto& p = problems[i];
          exec::describe_job one = job;
          one.problems = {{p.path.string(), p.source}};
          for (const auto& [k, v] : p.cpu_overrides)
            one.overrides.emplace(k, v);
          collect(one, i);
        }
    }
    if (s->format == "json") {
      auto array = json::array();
      for (std::size_t i = 0; i < problems.size(); ++i) {
        const auto& p = problems[i];
        array.push_back({{"suite", p.suite},
                         {"level", p.level},
                         {"id", p.number},
                         {"name", p.name},
                         {"file", p.path.string()},
                         {"description", described[i].value("description", json())},
                         {"error", described[i].value("error", "")}});
      }
      std::cout << array.dump(2) << "\n";
      return 0;
    }
    std::size_t suite_width = 11; // wider for cuda-agent-ops-6k
    for (const auto& p : problems)
      suite_width = std::max(suite_width, p.suite.size());
    fmt::print("{:<{}} {:>2} {:>4} {:<44} {}\n", "suite", suite_width, "L", "id", "name", "inputs");
    std::size_t broken = 0;
    for (std::size_t i = 0; i < problems.size(); ++i) {
      const auto& p = problems[i];
      broken += described[i].contains("error") ? 1 : 0;
      std::string shapes =
          described[i].contains("error") ? "error: " + last_line(described[i]["error"].get<std::string>())
          : described[i].contains("description") ? summarize_inputs(described[i]["description"]["inputs"])
                                                 : "";
      if (shapes.size() > 200) shapes = shapes.substr(0, 197) + "...";
      fmt::print("{:<{}} {:>2} {:>4} {:<44} {}\n", p.suite, suite_width, p.level, p.number,
                 p.name.substr(0, 44), shapes);
    }
    fmt::print("{} problems\n", problems.size());
    if (broken == 0) return 0;
    fmt::print(stderr,
               "kj: {} of {} problems cannot be loaded (their error above; the traceback: kj problems "
               "--format json): kj run would record them problem_error\n",
               broken, problems.size());
    return 2;
  };
}

} // namespace kj::cli
