// `kj generate`: candidates from an LLM adapter, written and recorded, not judged.
#include "adapters/generate/accounting.hpp"
#include "adapters/generate/generate.hpp"
#include "app/cli/commands.hpp"
#include "app/cli/common.hpp"
#include "app/cli/generation_flags.hpp"
#include "core/version.hpp"
#include "db/store.hpp"
#include "engine/exec/job_runner.hpp"
#include "engine/exec/process.hpp"
#include "planning/orchestrator/problem_sources.hpp"
#include "planning/orchestrator/run.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/core.h>
#include <iostream>
#include <memory>
#include <optional>
#include <random>

namespace kj::cli {
namespace {

std::string new_generation_uid() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return fmt::format("g{}-{:04x}", stamp, rd() & 0xffff);
}

} // namespace

action add_generate_command(CLI::App& app, int argc, char** argv) {
  auto* cmd =
      app.add_subcommand("generate", "Ask an LLM for candidates without judging them: into the DB, and "
                                     "optionally a folder of KernelBench-named files");
  struct state {
    std::string db = default_db_path();
    std::string device = "cuda";
    std::string out;
    std::string run_uid;
    source_flags sources;
    generation_flags generation;
  };
  auto s = std::make_shared<state>();
  cmd->add_option("--db", s->db, "SQLite file to write (created if missing)")->capture_default_str();
  cmd->add_option("--device", s->device,
                  "the device the prompt asks kernels for: cuda (CUDA extensions) or cpu "
                  "(C++ extensions)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--out", s->out, "also write each candidate as level_L_problem_N_sample_S_kernel.py here");
  cmd->add_option("--run-id", s->run_uid,
                  "name of the run; an existing one is resumed (answers it recorded are "
                  "not asked for again)")
      ->check(run_id());
  s->sources.add_to(*cmd);
  s->generation.add_to(*cmd, generation_use::generate);
  return [s, argc, argv] {
    const adapters::generation_options options = s->generation.resolve();
    require_credentials(options);
    if (!s->out.empty()) { // found now, before any request is paid for
      std::error_code ec;
      if (std::filesystem::exists(s->out, ec) && !std::filesystem::is_directory(s->out, ec))
        throw usage_error(
            fmt::format("--out {}: a file, not a folder: the candidates are written into a folder", s->out));
      std::filesystem::create_directories(s->out, ec);
      if (ec) throw usage_error(fmt::format("--out {}: cannot create the folder: {}", s->out, ec.message()));
    }
    const auto problems =
        orchestrator::load_all_problems(s->sources.resolve(), exec::cache_dir_or_default({}));
    db::store store = db::store::open(s->db);
    const std::string run_uid = s->run_uid.empty() ? new_generation_uid() : s->run_uid;
    std::int64_t run_id = 0;
    bool created = false;
    if (auto existing = store.find_run(run_uid)) {
      run_id = *existing;
      store.set_run_status(run_id, "running");
    } else {
      std::string command_line;
      for (int i = 0; i < argc; ++i)
        command_line += (i ? " " : "") + std::string(argv[i]);
      const nlohmann::json config{{"command", "generate"}, {"device", s->device}};
      run_id = store.create_run(
          {run_uid, "", "running", s->device, command_line, version_string(), config.dump(), 0});
      created = true;
    }
    const auto problem_ids = orchestrator::record_problems(store, problems);
    exec::install_interrupt_handlers();
    adapters::generation_result result;
    try {
      result = adapters::generate_candidates(store, run_id, problems, problem_ids, options, s->device,
                                             exec::interrupt_requested);
    } catch (const std::exception& e) { // no ghost: a run that asked nothing goes, one that did is failed
      if (created && store.llm_costs(run_uid).empty()) {
        store.remove_run(run_id);
      } else {
        store.set_run_status(run_id, "failed");
        store.set_run_detail(run_id, e.what());
      }
      throw;
    }
    if (result.interrupted) {
      store.set_run_status(run_id, "interrupted");
      fmt::print(stderr, "kj: interrupted; resume with: kj generate --run-id {} ...\n", run_uid);
      return 130;
    }
    if (!s->out.empty()) {
      const int written = adapters::write_kernelbench_files(s->out, problems, result.candidates);
      fmt::print(stderr, "kj: wrote {} candidate files to {}\n", written, s->out);
    }
    store.set_run_status(run_id, "generated");
    adapters::write_cost_table(store.llm_costs(run_uid), std::cout);
    fmt::print(
        "\nrun {}: {} candidates from {} in {}\njudge them: kj run --adapter replay --from {} (same problem "
        "options)\n",
        run_uid, result.candidates.size(), result.producer, s->db, run_uid);
    const bool any_code = std::any_of(result.candidates.begin(), result.candidates.end(),
                                      [](const auto& c) { return c.no_code.empty(); }); // else exit 1
    if (!any_code) fmt::print(stderr, "kj: no candidate with code was generated\n");
    return any_code ? 0 : 1;
  };
}

} // namespace kj::cli
