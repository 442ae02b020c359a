// `kj runs`: the runs of a DB with their status, producer, counts and options; `kj runs rm` removes one.
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/run_parts.hpp"
#include "db/store.hpp"
#include "planning/orchestrator/run_lock.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

namespace kj::cli {
namespace {

using nlohmann::json;

json config_of(const db::run_row& r) {
  try {
    return json::parse(r.config_json);
  } catch (const json::exception&) {
    return json::object();
  }
}

// What defines the run, in a few words: candidates, problems, checks, timing.
std::string options_summary(const json& c) {
  std::string text;
  const auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  if (c.value("command", "") == "generate") // judges nothing: its device is the one its prompts asked for
    return fmt::format("kj generate, kernels asked for {}", c.value("device", "cuda"));
  const std::string candidates = c.value("candidates", "");
  const std::string folder = std::filesystem::path(candidates).filename().string();
  if (c.value("command", "") == "agent")
    add(fmt::format("built-in agent, {}/{}", c.value("adapter", "?"), c.value("model", "?")));
  else if (candidates.empty()) // the built-in examples, or an LLM adapter's (its config names no producer)
    add(c.value("producer", "examples").empty() ? "LLM adapter" : "examples");
  else if (candidates == "identity" || candidates == "examples")
    add(candidates);
  else
    add(folder == "identity" || folder == "examples" ? folder + "/" : folder); // a folder, not the built-in
  const json sources = c.value("sources", json::object());
  if (!sources.value("kernelbench", "").empty()) add("kernelbench");
  if (!sources.value("files", json::array()).empty())
    add(fmt::format("{} problem files", sources["files"].size()));
  if (!sources.value("levels", "").empty()) add("level " + sources.value("levels", ""));
  if (!sources.value("ids", "").empty()) add("ids " + sources.value("ids", ""));
  if (!c.value("filter", "").empty()) add("-k " + c.value("filter", ""));
  if (c.contains("protocol")) add(c.value("protocol", "") + "/" + c.value("kb_version", "main"));
  if (!c.value("strict", true)) add("no strict");
  const json timing = c.value("timing", json::object());
  if (!timing.empty())
    add(timing.value("enabled", true) ? "timing " + timing.value("method", "robust") : "no timing");
  if (timing.value("enabled", true) && timing.value("rounds", 3) == 1) add("1 timing round");
  const json overrides = c.value("overrides", json::object());
  for (const auto& [name, value] : overrides.items())
    add(fmt::format("--set {}={}", name, value.dump()));
  if (!c.value("shard", "").empty()) add("shard " + c.value("shard", ""));
  return text;
}

std::string verdicts_text(const db::run_row& r) {
  std::string text;
  for (const auto& [verdict, n] : r.verdicts)
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", n, verdict);
  return text;
}

// A run marked running is worked on only while a kj holds its lock; else its kj was killed. A merged run that
// lacks shards of its plan (kj merge of some shards, a kj-ray driver killed) is partial, whatever its parts
// say.
std::string status_text(const std::vector<db::run_part_record>& parts, const std::filesystem::path& db,
                        const db::run_row& r) {
  if (const auto missing = missing_shards(parts); !missing.empty() && r.status != "running") {
    const auto shards = shards_of(parts);
    const int count = shards.rbegin()->first;
    return fmt::format("partial ({} of {} shards)", count - static_cast<int>(missing.size()), count);
  }
  if (r.status != "running") return r.status;
  const auto pid = orchestrator::run_lock::holder(db, r.run_uid);
  return pid ? fmt::format("running (pid {})", *pid) : "abandoned";
}

int list_runs(const std::string& db_path, const std::string& format) {
  const db::store store = db::store::open_read_only(db_path);
  const auto runs = store.runs();
  if (format == "json") {
    json out = json::array();
    for (const auto& r : runs)
      out.push_back({{"run", r.run_uid},
                     {"created_at", r.created_at},
                     {"status", status_text(store.run_parts(r.id), db_path, r)},
                     {"producer", r.producer},
                     {"device", r.device},
                     {"evaluations", r.evaluations},
                     {"verdicts", r.verdicts},
                     {"stack", r.stack_hash},
                     {"detail", r.detail},
                     {"command_line", r.command_line},
                     {"config", config_of(r)}});
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return 0;
  }
  fmt::print("{:<24} {:<20} {:<20} {:<20} {:<5} {:>5}  {:<32} {}\n", "run", "created (UTC)", "status",
             "producer", "dev", "evals", "verdicts", "options");
  for (const auto& r : runs) {
    json config = config_of(r);
    const bool judged_nothing = config.value("command", "") == "generate";
    const auto parts = store.run_parts(r.id);
    if (!parts.empty()) config.erase("shard"); // merged: its status says which shards it holds
    fmt::print("{:<24} {:<20} {:<20} {:<20} {:<5} {:>5}  {:<32} {}\n", r.run_uid, r.created_at.substr(0, 19),
               status_text(parts, db_path, r), r.producer.empty() ? "-" : r.producer,
               judged_nothing ? "-" : r.device, r.evaluations, verdicts_text(r), options_summary(config));
    if (!r.detail.empty()) fmt::print("{:<24} {}\n", "", r.detail.substr(0, r.detail.find('\n')));
  }
  if (runs.empty()) fmt::print(stderr, "kj: no runs in {}\n", db_path);
  return 0;
}

// Every run named is checked before any is removed: one that cannot go leaves all of them in place.
int remove_runs(const std::string& db_path, const std::vector<std::string>& uids, bool force) {
  db::store store = db::store::open(db_path);
  struct removal {
    std::string uid;
    std::int64_t id;
    db::run_record run;
  };
  std::vector<removal> removable;
  std::set<std::int64_t> named;
  for (const auto& uid : uids) {
    const auto id = store.find_run(uid);
    if (!id)
      throw usage_error(fmt::format("no run '{}' in {} (kj runs --db {} lists them); nothing removed", uid,
                                    db_path, db_path));
    if (const auto pid = orchestrator::run_lock::holder(db_path, uid))
      throw usage_error(
          fmt::format("run {} is in use by kj (pid {}): stop it first; nothing removed", uid, *pid));
    const db::run_record run = store.get_run(*id).value();
    if ((run.status == "finished" || run.status == "generated") &&
        !force) // a generation's answers were paid for
      throw usage_error(fmt::format(
          "run {} {} with {} evaluations: pass --force to remove it anyway; nothing removed", uid,
          run.status == "generated" ? "generated its candidates" : "finished", store.evaluation_count(*id)));
    if (named.insert(*id).second) removable.push_back({uid, *id, run});
  }
  for (const auto& r : removable) {
    const auto evaluations = store.evaluation_count(r.id);
    store.remove_run(r.id);
    fmt::print("removed run {} ({}, {} evaluations)\n", r.uid, r.run.status, evaluations);
  }
  return 0;
}

} // namespace

action add_runs_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("runs", "List the runs of a DB (status, producer, counts, options); "
                                         "kj runs rm RUN removes a failed or abandoned one");
  struct state {
    std::string db = default_db_path();
    std::string format = "table";
    std::vector<std::string> remove;
    bool force = false;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--format", s->format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  auto* rm = cmd->add_subcommand("rm", "Remove runs with everything recorded under them (evaluations, "
                                       "exchanges, trajectories): failed, interrupted or abandoned ones, "
                                       "finished ones with --force; never one a kj is working on");
  rm->alias("remove");
  rm->add_option("runs", s->remove, "run ids")->required();
  rm->add_option("--db", s->db, "SQLite file to change")->capture_default_str();
  rm->add_flag("--force", s->force, "also remove finished runs");
  return [s, rm] {
    return rm->parsed() ? remove_runs(s->db, s->remove, s->force) : list_runs(s->db, s->format);
  };
}

} // namespace kj::cli
