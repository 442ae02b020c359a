// Implements the run's stored config, its producer label, and the comparison a resume makes.
#include "planning/orchestrator/run_config.hpp"

#include "engine/exec/sandbox.hpp"
#include "kernelbench/problems.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/core.h>
#include <utility>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::orchestrator {
namespace {

// The path as a resume in another folder (or with a trailing slash) names it too.
std::string absolute_text(const fs::path& path) {
  if (path.empty()) return "";
  fs::path normal = fs::absolute(path).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  return normal.string();
}

std::string lower(std::string text) {
  for (char& c : text)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool is_named_producer(const std::string& candidates) {
  return candidates.empty() || candidates == "identity" || candidates == "examples";
}

struct defining_option {
  const char* key;      // JSON pointer into the config
  const char* flag;     // the option that sets it
  bool negated = false; // a --no-... flag: given when the value is false
};

// Every option that defines a run: where it is in the config, and the flag that sets it.
const std::vector<defining_option>& defining_options() {
  static const std::vector<defining_option> options{
      {"/device", "--device"},
      {"/candidates", "--candidates"},
      {"/producer", "--producer"},
      {"/sources/kernelbench", "--kernelbench"},
      {"/sources/levels", "--level"},
      {"/sources/ids", "--ids"},
      {"/sources/files", "--problem"},
      {"/sources/ops6k", "--ops6k"},
      {"/sources/builtin", "--builtin"},
      {"/kb_version", "--kb-version"},
      {"/overrides", "--set"},
      {"/filter", "-k"},
      {"/protocol", "--protocol"},
      {"/trials", "--trials"},
      {"/precision", "--precision"},
      {"/input_rng", "--input-rng"},
      {"/strict", "--no-strict", true},
      {"/library_policy", "--library-policy"},
      {"/max_library_share", "--max-library-share"},
      {"/timing/enabled", "--no-timing", true},
      {"/timing/method", "--timing-method"},
      {"/timing/min_samples", "--min-samples"},
      {"/timing/min_time_ms", "--min-time-ms"},
      {"/timing/max_time_ms", "--max-time-ms"},
      {"/timing/target_rel_ci", "--target-ci"},
      {"/timing/rounds", "--rounds"},
      {"/timing/check_outputs", "--no-output-check", true},
      {"/timing/graphs", "--graphs"},
      {"/timing/floor", "--no-floor", true},
  };
  return options;
}

std::string value_text(const json& v, bool negated) {
  if (negated && v.is_boolean()) return v.get<bool>() ? "not given" : "given";
  if (v.is_null() || (v.is_string() && v.get<std::string>().empty()) || (v.is_array() && v.empty()) ||
      (v.is_object() && v.empty()))
    return "(none)";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return v.dump();
}

} // namespace

json source_selection(const kb::source_options& s) {
  json files = json::array();
  for (const auto& f : s.files)
    files.push_back(absolute_text(f));
  std::string levels;
  for (int level : s.levels)
    levels += (levels.empty() ? "" : ",") + std::to_string(level);
  return {{"kernelbench", absolute_text(s.kernelbench_dir)},
          {"levels", levels},
          {"ids", s.ids.text()},
          {"files", files},
          {"ops6k", absolute_text(s.ops6k_path)},
          {"builtin", s.builtin}};
}

std::string resolve_candidates(const std::string& given) {
  if (given.rfind("builtin:", 0) == 0) {
    const std::string name = given.substr(8);
    if (name != "identity" && name != "examples")
      throw kb::source_error(fmt::format("--candidates {}: no such built-in source (builtin:identity, each "
                                         "problem's own Model; builtin:examples, the built-in suite's)",
                                         given));
    return name;
  }
  if (lower(given).rfind("builtin:", 0) == 0) // BUILTIN:identity
    throw kb::source_error(
        fmt::format("--candidates {}: the built-in sources are written builtin:identity and "
                    "builtin:examples",
                    given));
  // A path wins, a dangling link too (the run then says it is missing): never the built-in source in
  // disguise.
  if (!is_named_producer(given) || given.empty() || !fs::exists(fs::symlink_status(given))) return given;
  fmt::print(stderr,
             "kj: note: --candidates {0}: the {1} ./{0} (for the built-in source write --candidates "
             "builtin:{0})\n",
             given,
             fs::is_directory(given) ? "folder"
             : fs::exists(given)     ? "file"
                                     : "link to a missing path");
  return "./" + given;
}

std::string default_producer(const run_options& options) {
  if (!options.producer.empty()) return options.producer;
  if (options.generation.active()) return "";
  if (options.candidates.empty() || options.candidates == "examples") return "examples";
  if (options.candidates == "identity") return "identity";
  fs::path path = fs::absolute(options.candidates).lexically_normal();
  if (path.filename().empty()) path = path.parent_path();
  if (fs::is_regular_file(path)) path = path.parent_path();
  const std::string name = path.filename().string();
  return is_named_producer(name) ? name + "/" : name; // a folder never passes for a built-in source
}

json judging_config(const judging_settings& judging) {
  return {{"strict", judging.strict},
          {"timeout_s", judging.timeout_s},
          {"build_timeout_s", judging.build_timeout_s},
          {"limits", judging.limits},
          {"overrides", judging.overrides},
          {"timing", judging.timing},
          {"protocol", kj::name_of(judging.protocol)},
          {"trials", judging.trials},
          {"library_policy", judging.trace.library_policy},
          {"max_library_share", judging.trace.max_library_share},
          {"precision", kj::name_of(judging.precision)},
          {"input_rng", judging.input_rng},
          {"sandbox", exec::sandbox_kind()},
          {"pid_namespace", exec::sandbox_pid_namespace()},
          {"identity", exec::identity_kind(exec::sandbox_kind() == "bwrap")},
          {"seccomp", exec::have_seccomp()}};
}

json run_config(const run_options& options) {
  const std::string producer = default_producer(options);
  json config{{"config_version", 2},
              {"candidates", is_named_producer(options.candidates) ? options.candidates
                                                                   : absolute_text(options.candidates)},
              {"producer", producer},
              {"sources", source_selection(options.sources)},
              {"filter", options.filter},
              {"baselines", options.baselines},
              {"gpus", options.gpus},
              {"kb_version", options.sources.kb_version},
              {"shard", options.part.label()}};
  config.update(judging_config(options.judging));
  return config;
}

std::vector<std::string> config_differences(const json& stored, const json& now) {
  std::vector<std::string> out;
  if (stored.value("config_version", 1) < 2) return out;
  for (const auto& o : defining_options()) {
    const json::json_pointer pointer(o.key);
    const json before = stored.contains(pointer) ? stored.at(pointer) : json();
    const json after = now.contains(pointer) ? now.at(pointer) : json();
    if (before != after)
      out.push_back(fmt::format("{}: {} in the run, {} now", o.flag, value_text(before, o.negated),
                                value_text(after, o.negated)));
  }
  // --quick is not stored: it is the timing options it sets, so a resume that dropped it differs in those
  const auto quick = [](const std::string& d) {
    for (const char* flag :
         {"--min-samples:", "--min-time-ms:", "--max-time-ms:", "--rounds:", "--no-floor:"})
      if (d.starts_with(flag)) return true;
    return false;
  };
  if (std::count_if(out.begin(), out.end(), quick) >= 2)
    out.push_back(
        "(--quick sets --min-samples 5 --min-time-ms 20 --max-time-ms 200 --rounds 1 --no-floor: give "
        "--quick again if the run had it)");
  return out;
}

} // namespace kj::orchestrator
