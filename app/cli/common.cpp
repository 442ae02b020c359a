// Implements the shared source options (--kernelbench, --level, --ids, --problem, --ops6k, --builtin, --set).
#include "app/cli/common.hpp"

#include "engine/exec/timing_methods.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/core.h>
#include <fstream>
#include <optional>
#include <regex>
#include <unistd.h>

namespace kj::cli {

void source_flags::add_to(CLI::App& app) {
  app.add_option("--kernelbench", kernelbench,
                 "KernelBench checkout to load problems from (default: $KERNELBENCH_DIR when set)");
  app.add_option("--kb-version", kb_version, "KernelBench version whose rules apply: main, v0.1 or v0")
      ->check(CLI::IsMember({"main", "v0.1", "v0"}));
  app.add_option("--level", levels, "levels to load, e.g. 1 or 1,2 (default: all; not applied to --ops6k)");
  app.add_option("--ids", ids,
                 "problem ids to load, e.g. 1-10,19 (default: all); for --ops6k, row numbers counted from 1");
  app.add_option("--problem", files, "a single problem file in KernelBench format (repeatable)");
  app.add_option(
      "--ops6k", ops6k,
      "CUDA-Agent-Ops-6K's parquet file: each row's `code` is a problem (suite cuda-agent-ops-6k, "
      "level 0, id = row number, name from `ops` or a `name` column); reading it needs pyarrow in the "
      "embedded Python");
  app.add_flag("--builtin", builtin, "the built-in suite (the default when no other source is given)");
  app.add_option("--set", sets,
                 "override an integer module constant of the problems before get_inputs/get_init_inputs run, "
                 "e.g. --set batch_size=4 (repeatable)");
  app.add_option(
         "--problems", problem_set,
         "all, or verified: only the problems the verified set (--verified-set) calls sound at the "
         "run's precision (one with no audit at that precision is left out); a line counts what was left "
         "out and why, kj verified show lists each (docs/verified.md)")
      ->check(CLI::IsMember({"all", "verified"}));
  app.add_option("--verified-set", verified_file,
                 "the verified problem set's file (default: $KJ_VERIFIED_SET, else the shipped "
                 "kernelbench/verified/kernelbench-main.json)");
}

kb::source_options source_flags::resolve() const {
  kb::source_options options;
  options.kb_version = kb_version;
  options.kernelbench_dir = kernelbench;
  if (options.kernelbench_dir.empty())
    if (const char* env = std::getenv("KERNELBENCH_DIR");
        env && *env && files.empty() && ops6k.empty() && !builtin)
      options.kernelbench_dir = env;
  for (const auto& f : files)
    options.files.emplace_back(f);
  options.ops6k_path = ops6k;
  options.problem_set = problem_set;
  options.verified_file = verified_file;
  options.builtin =
      builtin || (options.kernelbench_dir.empty() && options.files.empty() && options.ops6k_path.empty());
  try {
    if (!levels.empty())
      for (int level : kb::id_set::parse(levels).values())
        options.levels.push_back(level);
    if (!ids.empty()) options.ids = kb::id_set::parse(ids);
  } catch (const std::invalid_argument& e) {
    throw usage_error(std::string("--level/--ids: ") + e.what());
  }
  return options;
}

std::map<std::string, std::int64_t> source_flags::overrides() const {
  std::map<std::string, std::int64_t> result;
  for (const auto& s : sets) {
    const std::size_t eq = s.find('=');
    std::int64_t value = 0;
    const char* begin = s.data() + (eq == std::string::npos ? 0 : eq + 1);
    const auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), value);
    static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
    if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != s.data() + s.size() ||
        !std::regex_match(s.substr(0, eq), identifier))
      throw usage_error("--set '" + s + "': expected NAME=INTEGER, e.g. --set batch_size=4");
    if (!result.emplace(s.substr(0, eq), value).second)
      throw usage_error(fmt::format("--set {}: {} is given twice (--set {}={} before it)", s, s.substr(0, eq),
                                    s.substr(0, eq), result.at(s.substr(0, eq))));
  }
  return result;
}

std::map<std::string, std::int64_t>
source_flags::overrides_for(const std::vector<kb::problem>& problems) const {
  const auto result = overrides();
  const auto unmatched = kb::unmatched_overrides(problems, result);
  if (!unmatched.empty())
    throw usage_error(fmt::format("--set {}: no selected problem assigns {} at its top level, so it would "
                                  "change nothing (--set overrides an integer module constant such as "
                                  "batch_size)",
                                  unmatched.front(), unmatched.front()));
  return result;
}

namespace {

std::optional<double> number_of(const std::string& text, bool whole) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  if (whole && value != std::floor(value)) return std::nullopt;
  return value;
}

std::string kind(bool whole) {
  return whole ? "a whole number" : "a number";
}

} // namespace

CLI::Validator at_least(double minimum, bool whole) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto v = number_of(text, whole);
        if (v && *v >= minimum) return "";
        return fmt::format("must be {} of at least {}, not '{}'", kind(whole), minimum, text);
      },
      fmt::format("{}>={}", whole ? "INT" : "NUM", minimum));
}

CLI::Validator above(double bound) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto v = number_of(text, false);
        if (v && *v > bound) return "";
        return fmt::format("must be a number greater than {}, not '{}'", bound, text);
      },
      fmt::format("NUM>{}", bound));
}

CLI::Option* add_precision_option(CLI::App& cmd, kj::precision& target, const std::string& help,
                                  const std::vector<std::string>& names) {
  return cmd
      .add_option_function<std::string>(
          "--precision", [&target](const std::string& name) { target = *kj::parse_precision(name); }, help)
      ->check(CLI::IsMember(names))
      ->default_str(kj::name_of(target));
}

CLI::Option* add_protocol_option(CLI::App& cmd, kj::protocol_kind& target, const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          "--protocol", [&target](const std::string& name) { target = *kj::parse_protocol_kind(name); }, help)
      ->check(CLI::IsMember({"kernelbench", "cuda-agent"}))
      ->default_str(kj::name_of(target));
}

CLI::Validator seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto v = number_of(text, false);
        if (v && *v > 0) return "";
        return fmt::format("must be a number of seconds greater than 0, without a unit (e.g. 600 for ten "
                           "minutes), not '{}'",
                           text);
      },
      "SECONDS");
}

CLI::Validator run_id() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool plain =
            !text.empty() && text.size() <= 100 && std::all_of(text.begin(), text.end(), [](char c) {
              return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
            });
        if (plain && text != "latest" && text.front() != '-' && text.front() != '.') return "";
        return fmt::format(
            "'{}' cannot name a run: use letters, digits, '-', '_' and '.' (100 at most, not "
            "starting with '-' or '.'), and not 'latest', which kj compare reads as the newest run",
            text);
      },
      "ID");
}

CLI::Validator within(double low, double high, bool whole) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto v = number_of(text, whole);
        if (v && *v >= low && *v <= high) return "";
        return fmt::format("must be {} from {} to {}, not '{}'", kind(whole), low, high, text);
      },
      fmt::format("{}:[{}-{}]", whole ? "INT" : "NUM", low, high));
}

void check_python_override() {
  const char* env = std::getenv("KJ_PYTHON");
  if (!env || !*env) return;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(env, ec) || ::access(env, X_OK) != 0)
    throw usage_error(
        fmt::format("KJ_PYTHON={}: no such executable; point it at a python3 that imports torch, "
                    "or unset it to use the one kj was built with",
                    env));
}

void add_timing_options(CLI::App& app, exec::timing_spec& t) {
  std::string methods;
  for (const auto& m : exec::timing_methods())
    methods += fmt::format("{}{} ({})", methods.empty() ? "" : ", ", m.name, m.help);
  app.add_option("--timing-method", t.method, methods)
      ->check(CLI::IsMember(exec::timing_method_names()))
      ->capture_default_str();
  app.add_option("--min-samples", t.min_samples, "robust timing: at least this many samples")
      ->check(at_least(1, true))
      ->capture_default_str();
  app.add_option("--min-time-ms", t.min_time_ms, "robust timing: at least this much measured time")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--max-time-ms", t.max_time_ms, "robust timing: at most this much measured time per subject")
      ->check(above(0))
      ->capture_default_str();
  app.add_option("--target-ci", t.target_rel_ci,
                 "robust timing: stop when the 95% confidence interval of the median is within this "
                 "fraction of it")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
}

std::string default_db_path() {
  return "kj.sqlite";
}

std::string run_or_latest(const db::store& store, const std::string& run, const std::string& db_path) {
  if (run.empty() || (run == "latest" && !store.find_run(run))) { // as kj compare takes it
    const auto latest = store.latest_run_uid();
    if (!latest) throw usage_error("no runs in " + db_path);
    return *latest;
  }
  if (!store.find_run(run))
    throw usage_error(fmt::format("no run '{}' in {} (kj runs --db {} lists them)", run, db_path, db_path));
  return run;
}

void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) throw usage_error(fmt::format("{} {}: cannot write that file", what, path));
}

} // namespace kj::cli
