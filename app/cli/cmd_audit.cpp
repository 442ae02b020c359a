// `kj audit`: the problem set judged before any candidate (null candidates under both rules, a stochastic or
// constant reference, the fp32 reference's tolerance use); a table or JSON, stored in the DB (schema v10).
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "core/hashing.hpp"
#include "db/store.hpp"
#include "engine/exec/job_runner.hpp"
#include "kernelbench/verified_build.hpp"
#include "planning/orchestrator/audit.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "planning/orchestrator/run.hpp"

#include <fmt/core.h>
#include <iostream>
#include <memory>
#include <string>

using nlohmann::json;

namespace kj::cli {
namespace {

// "c" accepted by KernelBench's rule, "s" by the strict rule, "-" by neither, "n/a" not applicable.
std::string cell(const json& null) {
  if (!null.is_object()) return "n/a";
  const json& c = null.value("compatible", json());
  const json& s = null.value("strict", json());
  if (c.is_null() && s.is_null()) return "n/a";
  std::string text = (c == true ? "c" : "") + std::string(s == true ? "s" : "");
  return text.empty() ? "-" : text;
}

// A traceback's last line: the exception and its message.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return text;
  const std::size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string verdict_of(const db::problem_audit_record& r) {
  if (kb::audit_out_of_memory(r.error))
    return "kj-oom"; // kj's own audit ran out of memory: not the problem's flaw
  if (!r.error.empty()) return "error";
  return r.unsound ? "UNSOUND" : "sound";
}

void print_table(const std::vector<orchestrator::audited_problem>& audited) {
  fmt::print("{:>2} {:>4} {:<32} {:<7}", "L", "id", "problem", "verdict");
  for (const auto& n : orchestrator::audit_nulls)
    fmt::print(" {:>5}", n);
  fmt::print(" {:>9}  {}\n", "tol. use", "why / notes");
  std::size_t unsound = 0, errors = 0, kj_oom = 0;
  for (const auto& a : audited) {
    const auto& r = a.record;
    unsound += r.unsound ? 1 : 0;
    errors += r.error.empty() ? 0 : 1;
    kj_oom += kb::audit_out_of_memory(r.error) ? 1 : 0;
    fmt::print("{:>2} {:>4} {:<32} {:<7}", a.problem->level, a.problem->number, a.problem->name.substr(0, 32),
               verdict_of(r));
    for (const auto& n : orchestrator::audit_nulls)
      fmt::print(" {:>5}", cell(a.nulls.value(n, json())));
    const std::string use = r.tolerance_use ? fmt::format("{:.2g}", *r.tolerance_use) : "-";
    std::string why = !r.error.empty() ? last_line(r.error) : !r.reasons.empty() ? r.reasons : r.notes;
    for (auto& c : why)
      if (c == '\n') c = ';';
    fmt::print(" {:>9}  {}\n", use, why.substr(0, 160));
  }
  fmt::print("{} problems audited: {} sound, {} unsound, {} could not be audited{}\n", audited.size(),
             audited.size() - unsound - errors, unsound, errors,
             kj_oom ? fmt::format(" ({} of them: kj-oom, kj's own audit ran out of device memory)", kj_oom)
                    : "");
  fmt::print("null candidates: c = KernelBench's rule accepts it, s = the strict rule accepts it, - = both "
             "reject it; tol. use = the fp32 reference's own error as a share of KernelBench's tolerance\n");
}

json to_json(const orchestrator::audited_problem& a) {
  const auto& r = a.record;
  return {{"suite", a.problem->suite},
          {"level", a.problem->level},
          {"id", a.problem->number},
          {"name", a.problem->name},
          {"file", a.problem->path.string()},
          {"sha256", core::sha256_hex(a.problem->source)},
          {"device", r.device},
          {"protocol", r.protocol},
          {"unsound", r.unsound},
          {"stochastic", r.stochastic},
          {"constant_reference", r.constant_reference},
          {"tolerance_use", r.tolerance_use ? json(*r.tolerance_use) : json()},
          {"reasons", r.reasons},
          {"notes", r.notes},
          {"nulls", a.nulls},
          {"error", r.error}};
}

} // namespace

action add_audit_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "audit",
      "Judge the problem set before any candidate: which null candidates (zeros, a constant, an "
      "input passed through, fp16/bf16/TF32 downcasts) each rule accepts, and whether a reference is "
      "stochastic or constant; exit code 1 when a problem is unsound or could not be audited");
  struct state {
    source_flags sources;
    orchestrator::audit_options options;
    std::string cache_dir, format = "table", json_path;
  };
  auto s = std::make_shared<state>();
  s->options.db_path = default_db_path();
  s->sources.add_to(*cmd);
  cmd->add_option("--db", s->options.db_path, "SQLite file to write the audits to (created if missing)")
      ->capture_default_str();
  cmd->add_option("--device", s->options.device, "auto (cuda when torch sees a GPU, else cpu), cpu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  add_protocol_option(
      *cmd, s->options.protocol,
      "the compatible rule the null candidates meet: kernelbench (per --kb-version) or cuda-agent");
  add_precision_option(
      *cmd, s->options.precision,
      "models and floating inputs are cast to this dtype, as kj run --precision does "
      "(KernelBench's tolerance is 1e-2 for fp16 and bf16); tf32: fp32 with the reference's "
      "TF32 matmuls and convolutions on (CUDA only; fp32's tolerance), the audit with TF32 on "
      "beside fp32's with it off",
      {"fp32", "tf32", "fp16", "bf16"});
  cmd->add_option("--cache-dir", s->cache_dir,
                  "scratch folder (default: $KJ_CACHE_DIR or ~/.cache/kerneljudge)");
  cmd->add_option("--format", s->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--json", s->json_path,
                  "also write the audits as JSON (the --format json array) to this file, beside the table");
  return [s] {
    check_python_override();
    s->options.cache_dir = exec::cache_dir_or_default(s->cache_dir);
    orchestrator::check_cache_dir(s->options.cache_dir);
    s->options.problems = orchestrator::load_all_problems(s->sources.resolve(), s->options.cache_dir);
    s->options.overrides = s->sources.overrides_for(s->options.problems);
    if (!s->json_path.empty()) write_text_file(s->json_path, "[]\n", "--json"); // refused before the audit
    fmt::print(stderr, "kj: auditing {} problems...\n", s->options.problems.size());
    std::string device;
    const auto [audited, stopped] = orchestrator::run_audit(s->options, device);
    json array = json::array();
    for (const auto& a : audited)
      array.push_back(to_json(a));
    if (!s->json_path.empty()) write_text_file(s->json_path, array.dump(2) + "\n", "--json");
    if (s->format == "json")
      std::cout << array.dump(2) << "\n";
    else
      print_table(audited);
    fmt::print(stderr, "kj: the audits are in {} (on {})\n", s->options.db_path.string(), device);
    if (!stopped.empty()) {
      fmt::print(stderr, "kj: {}\nkj: the table holds the {} problems audited before that\n", stopped,
                 audited.size());
      return 1;
    }
    for (const auto& a : audited)
      if (a.record.unsound || !a.record.error.empty()) return 1;
    return 0;
  };
}

} // namespace kj::cli
