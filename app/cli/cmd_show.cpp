// `kj show`: one evaluation (verdicts, cases, timings, source) or one agent trajectory (its whole
// transcript), and the list of a run's trajectories.
#include "agent/transcript.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "db/store.hpp"

#include <charconv>
#include <fmt/core.h>
#include <iostream>
#include <memory>

namespace kj::cli {
namespace {

// The id given to `kj show evaluation|trajectory`: a whole number of 1 or more.
std::int64_t id_of(const std::string& what, const std::string& text) {
  const std::string lister = what == "trajectory" ? "kj show trajectories lists them"
                                                  : "kj results --format json gives each evaluation_id";
  if (text.empty())
    throw usage_error(fmt::format("kj show {} needs an id, e.g. kj show {} 3 ({})", what, what, lister));
  std::int64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size() || id <= 0)
    throw usage_error(
        fmt::format("kj show {} {}: an id is a whole number of 1 or more ({})", what, text, lister));
  return id;
}

} // namespace

action add_show_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("show", "Print one evaluation, one agent trajectory, or a run's trajectories");
  struct state {
    std::string db = default_db_path();
    std::string what;
    std::string id; // a number; read here so that "abc" gets kj's message, not CLI11's
    std::string run;
    bool full = false;
    bool source = false;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("what", s->what,
                  "evaluation ID, trajectory ID, or trajectories (of --run, default the latest run)")
      ->required()
      ->check(CLI::IsMember({"evaluation", "trajectory", "trajectories"}));
  cmd->add_option("id", s->id,
                  "the evaluation's or trajectory's id (kj results and kj show trajectories list them)");
  cmd->add_option("--db", s->db, "SQLite file to read")->capture_default_str();
  cmd->add_option("--run", s->run, "with trajectories: the run (default: the latest)");
  cmd->add_flag("--full", s->full, "trajectory: the prompts and every tool result whole");
  cmd->add_flag("--source", s->source, "evaluation: also the candidate's source");
  return [s] {
    const db::store store = db::store::open_read_only(s->db);
    if (s->what == "trajectories") {
      const std::string run = s->run.empty() ? store.latest_run_uid().value_or("") : s->run;
      if (run.empty() || !store.find_run(run)) throw usage_error("no run '" + run + "' in " + s->db);
      const auto trajectories = store.trajectories(run);
      if (trajectories.empty()) throw usage_error("run '" + run + "' has no agent trajectories");
      agent::write_trajectory_table(trajectories, store, std::cout);
      return 0;
    }
    const std::int64_t id = id_of(s->what, s->id);
    if (s->what == "trajectory") {
      const auto transcript = store.get_transcript(id);
      if (!transcript) throw usage_error("no trajectory " + std::to_string(id) + " in " + s->db);
      agent::write_transcript(*transcript, store, std::cout, {.full = s->full});
      return 0;
    }
    const auto evaluation = store.get_evaluation(id);
    if (!evaluation) throw usage_error("no evaluation " + std::to_string(id) + " in " + s->db);
    agent::write_evaluation(id, *evaluation, store, std::cout, s->source);
    return 0;
  };
}

} // namespace kj::cli
