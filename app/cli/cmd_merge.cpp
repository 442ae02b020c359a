// `kj merge`: combine databases (the shards of a run, runs from several machines) into one; `kj db migrate`.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/run_parts.hpp"
#include "db/merge.hpp"
#include "db/store.hpp"
#include "planning/orchestrator/shard.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <map>
#include <memory>
#include <set>

namespace kj::cli {
namespace {

// "12 evaluations, 3 problems, ..." for the tables that gained rows, the main ones first.
std::string added_text(const db::merge_report& report) {
  std::vector<std::string> parts;
  for (const auto& [table, n] : report.added)
    if (n > 0) parts.push_back(fmt::format("{} {}", n, table));
  return parts.empty() ? "nothing new" : fmt::format("{}", fmt::join(parts, ", "));
}

void print_run(const db::store& out, const std::string& run_uid) {
  const auto id = out.find_run(run_uid);
  if (!id) return;
  const auto run = out.get_run(*id);
  const auto parts = out.run_parts(*id);
  std::vector<std::string> described;
  for (const auto& p : parts)
    described.push_back(fmt::format("{} ({}, {} evaluation{})",
                                    p.shard.empty() ? "whole run" : "shard " + p.shard, p.status,
                                    p.evaluations, p.evaluations == 1 ? "" : "s"));
  fmt::print("run {}: {}, {} evaluations; parts: {}\n", run_uid, run ? run->status : "?",
             out.evaluation_count(*id), fmt::join(described, ", "));
  const auto shards = shards_of(parts);
  if (shards.size() > 1)
    fmt::print(stderr, "kj: warning: run {} holds shards of {} different counts: were they one plan?\n",
               run_uid, shards.size());
  const auto missing = missing_shards(parts);
  if (!missing.empty())
    fmt::print(stderr, "kj: warning: run {} lacks shard{} {} (merge them when they are done)\n", run_uid,
               missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));
}

} // namespace

action add_merge_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "merge",
      "Merge databases (the shards of a run, runs from other machines) into one: runs with the same id "
      "become one run, every evaluation keeps its own stack; inputs need this kj's schema version (kj "
      "db migrate); merging a file again adds nothing");
  struct state {
    std::vector<std::string> inputs;
    std::string output;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("inputs", s->inputs, "the databases to merge, e.g. shard-*.sqlite")->required();
  cmd->add_option("-o,--output", s->output,
                  "the database to merge into: created when missing, else added to (kept rows win)")
      ->required();
  return [s] {
    std::vector<std::string> runs;
    // A merge refused before any input went in leaves an output it created behind as nothing at all (not
    // an empty database); the inputs merged before a refused one stay merged (each input is one transaction).
    std::error_code ec;
    const bool existed = std::filesystem::exists(s->output, ec);
    std::vector<std::string> merged;
    try {
      for (const std::string& input : s->inputs) {
        const db::merge_report report = db::merge_database(s->output, input);
        merged.push_back(input);
        fmt::print("merged {}: {}{}\n", input, added_text(report),
                   report.evaluations_present ? fmt::format(" ({} evaluations were already in {})",
                                                            report.evaluations_present, s->output)
                                              : "");
        for (const auto& uid : report.run_uids)
          if (std::find(runs.begin(), runs.end(), uid) == runs.end()) runs.push_back(uid);
      }
    } catch (...) {
      if (!existed && merged.empty())
        for (const char* suffix : {"", "-wal", "-shm", "-journal"})
          std::filesystem::remove(s->output + suffix, ec);
      if (!merged.empty())
        fmt::print(stderr, "kj: {} keeps what was merged before the refused input: {}\n", s->output,
                   fmt::join(merged, ", "));
      throw;
    }
    const db::store out = db::store::open(s->output);
    for (const auto& uid : runs)
      print_run(out, uid);
    return 0;
  };
}

} // namespace kj::cli
