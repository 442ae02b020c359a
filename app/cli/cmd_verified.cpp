// `kj verified`: the verified problem set (kernelbench/verified.hpp). `show` lists each problem's standing,
// `build` writes the set's file from `kj audit --json` outputs and the public reports file.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "core/hashing.hpp"
#include "db/store.hpp"
#include "kernelbench/problems.hpp"
#include "kernelbench/verified.hpp"
#include "kernelbench/verified_build.hpp"

#include <fmt/core.h>
#include <fstream>
#include <memory>

using nlohmann::json;

namespace kj::cli {
namespace {

json read_json_file(const std::string& path, const std::string& option) {
  std::ifstream in(path);
  if (!in) throw usage_error(fmt::format("{} {}: cannot read that file", option, path));
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw usage_error(fmt::format("{} {}: not JSON ({})", option, path, e.what()));
  }
}

// The set's text: its header fields a line each, then one problem per line (a change to one problem is one
// line of a diff).
std::string set_text(const json& doc) {
  std::string text = "{\n";
  for (const auto& [key, value] : doc.items())
    if (key != "problems") text += fmt::format(" {}: {},\n", json(key).dump(), value.dump());
  text += " \"problems\": [\n";
  for (std::size_t i = 0; i < doc["problems"].size(); ++i)
    text += "  " + doc["problems"][i].dump() + (i + 1 < doc["problems"].size() ? ",\n" : "\n");
  return text + " ]\n}\n";
}

struct verified_state {
  std::string file;
  bool all = false;
  std::vector<std::string> audits; // PRECISION=FILE
  std::string public_file, kernelbench, kernelbench_commit, out, version, audited_on, command;
};

int show(const verified_state& s) {
  const auto set =
      kb::load_verified_set(s.file.empty() ? kb::default_verified_file() : std::filesystem::path(s.file));
  fmt::print("verified set {} ({} problems; KernelBench {}; audited on {})\n", set.version,
             set.problems.size(), set.kernelbench_commit.empty() ? "?" : set.kernelbench_commit.substr(0, 12),
             set.audited_on.empty() ? "?" : set.audited_on);
  std::map<std::string, int> counts;
  for (const auto& p : set.problems) {
    std::string line;
    bool flagged = false;
    for (const auto& [precision, status] : p.status) {
      ++counts[precision + " " + status];
      line += fmt::format(" {}:{}", precision, status);
      flagged = flagged || status != "sound";
    }
    if (!flagged && !s.all) continue;
    fmt::print("L{} {:>3} {:<40}{}\n", p.level, p.number, p.name.substr(0, 40), line);
    for (const auto& [precision, why] : p.why)
      if (p.status.at(precision) != "sound" && !why.empty())
        fmt::print("    {}: {}\n", precision, why.substr(0, std::min<std::size_t>(why.find('\n'), 200)));
    for (const auto& r : p.public_reports)
      fmt::print("    public: {}\n", r.substr(0, 160));
  }
  for (const auto& [what, n] : counts)
    fmt::print("{} {}\n", n, what);
  return 0;
}

int build(const verified_state& s) {
  kb::verified_build_input input{.version = s.version, .audited_on = s.audited_on};
  for (const auto& a : s.audits) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw usage_error(fmt::format("--audit '{}': expected PRECISION=FILE, e.g. fp32=audit-fp32.json", a));
    const std::string precision = a.substr(0, eq), path = a.substr(eq + 1);
    if (path.empty()) throw usage_error(fmt::format("--audit '{}': no file after '='", a));
    json entries = read_json_file(path, "--audit");
    kb::check_audit_entries(entries, "--audit " + path, precision);
    if (entries.empty()) throw usage_error(fmt::format("--audit {}: holds no audit", path));
    json& audits = input.audits[precision]; // one precision's audits may come in several files
    if (audits.is_null()) audits = json::array();
    for (auto& entry : entries)
      audits.push_back(std::move(entry));
  }
  if (!s.public_file.empty()) input.public_reports = read_json_file(s.public_file, "--public");
  if (!s.kernelbench.empty()) {
    kb::source_options options{.kernelbench_dir = s.kernelbench};
    for (const auto& p : kb::load_problems(options))
      input.source_sha256[{p.level, p.number, p.name}] = core::sha256_hex(p.source);
    input.kernelbench_commit = kb::git_commit_of(s.kernelbench);
  }
  if (!s.kernelbench_commit.empty()) input.kernelbench_commit = s.kernelbench_commit;
  input.command = s.command;
  if (s.version.empty()) throw usage_error("--version: give the set a version, e.g. 2026.11.28");
  const json doc = kb::build_verified_set(input);
  write_text_file(s.out, set_text(doc), "-o");
  fmt::print(stderr, "kj: wrote the verified set {} ({} problems) to {}\n", s.version, doc["problems"].size(),
             s.out);
  return 0;
}

} // namespace

action add_verified_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "verified", "The verified problem set: KernelBench main's problems as kj audit judged them on a GPU "
                  "(docs/verified.md); kj run --problems verified keeps its sound ones");
  cmd->require_subcommand(1);
  auto s = std::make_shared<verified_state>();
  auto* show_cmd = cmd->add_subcommand("show", "Each problem the set does not call sound, with why");
  show_cmd->add_option("--verified-set", s->file,
                       "the set's file (default: $KJ_VERIFIED_SET, else the shipped one)");
  show_cmd->add_flag("--all", s->all, "every problem, sound ones too");
  auto* build_cmd = cmd->add_subcommand("build", "Write a set's file from kj audit --json outputs");
  build_cmd
      ->add_option(
          "--audit", s->audits,
          "PRECISION=FILE: a kj audit --json output (repeatable; several files of one precision are joined)")
      ->required();
  build_cmd->add_option("--public", s->public_file,
                        "public reports naming problems (kernelbench/verified/public_reports.json)");
  build_cmd->add_option("--kernelbench", s->kernelbench,
                        "the audited KernelBench checkout (its commit; hashes for audits without sha256)");
  build_cmd->add_option("--version", s->version, "the set's version, e.g. 2026.11.28")->required();
  build_cmd->add_option("--audited-on", s->audited_on, "the GPU and stack the audits ran on");
  build_cmd->add_option("--kernelbench-commit", s->kernelbench_commit,
                        "the audited KernelBench commit, where the checkout is not a git clone");
  build_cmd->add_option("--provenance", s->command,
                        "how the audits were made (commands, kj commits), as text");
  build_cmd->add_option("-o,--out", s->out, "the file to write")->required();
  return [s, show_cmd] { return show_cmd->parsed() ? show(*s) : build(*s); };
}

} // namespace kj::cli
