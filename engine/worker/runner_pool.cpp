// Implements runner_pool: one spare runner, started with the last job's settings in folders of its own.
#include "engine/worker/runner_pool.hpp"

#include "engine/exec/process.hpp"
#include "engine/exec/sandbox.hpp"

#include <csignal>
#include <cstdlib>
#include <string>

namespace fs = std::filesystem;

namespace kj::worker {
namespace {

// Tests kill the spare before its candidate arrives (KJ_TEST_FAULT=spare): it must be replaced.
bool fault(const char* name) {
  const char* faults = std::getenv("KJ_TEST_FAULT");
  return faults && ("," + std::string(faults) + ",").find("," + std::string(name) + ",") != std::string::npos;
}

} // namespace

runner_pool::runner_pool(fs::path root)
    : m_environment(exec::scrubbed_environment()), m_root(std::move(root)) {}

runner_pool::~runner_pool() {
  drop_spare();
  remove_used();
}

void runner_pool::remove_used() {
  std::error_code ec;
  for (const auto& dir : m_used)
    fs::remove_all(dir, ec);
  m_used.clear();
}

std::unique_ptr<runner_link> runner_pool::connect(const runner_spec& job, const cuda::plugin* plugin,
                                                  bool more_jobs) {
  remove_used(); // the last job's runner is gone: its folders go too
  m_held = false;
  std::unique_ptr<runner_link> link;
  const bool adopted = m_spare && m_spare->launched_like(job);
  if (adopted) {
    link = std::move(m_spare);
    m_used.push_back(m_spare_dir);
    m_spare_dir.clear();
    if (fault("spare")) link->kill_for_test();
    link->adopt(job);
  } else {
    drop_spare();
    link = launch_own(job);
  }
  // Where the last job's runner had a PID namespace of its own, the next job's runner starts now, before this
  // one has finished its own start: a short evaluation then no longer waits for a runner still importing
  // torch. It stands still while this one's calibration is measured (neighbours), and goes before a candidate
  // is loaded in kj's PID namespace.
  if (more_jobs && m_isolated) start_next(job);
  try {
    connect_one(*link, plugin);
    // A spare that died waiting is kj's failure: a fresh runner takes the candidate. The dead one ends first:
    // its end kills what is left of its processes, never the fresh runner's.
    if (adopted && link->failed_before_load()) {
      link.reset();
      link = launch_own(job);
      connect_one(*link, plugin);
    }
  } catch (...) {
    isolated(false);
    throw;
  }
  isolated(link->isolation_note().empty() && exec::sandbox_pid_namespace());
  return link;
}

std::unique_ptr<runner_link> runner_pool::launch_own(const runner_spec& job) {
  runner_spec own = job; // a folder of its own, like every runner of a serving judge
  own.scratch = m_root / ("runner-" + std::to_string(m_next++));
  own.environment = m_environment;
  m_used.push_back(own.scratch);
  return std::make_unique<runner_link>(std::move(own));
}

void runner_pool::connect_one(runner_link& link, const cuda::plugin* plugin) {
  link.set_neighbours({.pause =
                           [this](bool on) {
                             if (m_spare) m_spare->pause(on);
                           },
                       .leaving_namespace = [this] { isolated(false); }});
  link.connect(plugin);
}

void runner_pool::isolated(bool yes) {
  m_isolated = yes;
  if (!yes) drop_spare(); // a candidate in kj's PID namespace would see the next job's runner
}

void runner_pool::start_next(const runner_spec& job) {
  if (m_spare || m_held) return;
  m_spare_dir = m_root / ("runner-" + std::to_string(m_next++));
  runner_spec spec = job;
  spec.scratch = m_spare_dir / "scratch";
  spec.extensions = m_spare_dir / "extensions";
  spec.problem = {};
  spec.candidate = {};
  spec.import_on_device = false; // a deferred build's import gets a runner of its own
  spec.environment = m_environment;
  // A clock of its own that reports nothing (this job's reports its own time): `adopt` gives it the job's.
  spec.clock = std::make_shared<judge_clock>(std::chrono::milliseconds(600'000), nullptr);
  std::error_code ec;
  fs::create_directories(spec.extensions, ec);
  fs::permissions(spec.extensions, fs::perms(0755),
                  ec); // readable by the runner's own uid, whatever the umask
  fs::permissions(m_spare_dir,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  try {
    m_spare = std::make_unique<runner_link>(std::move(spec), runner_link::started_ahead_t{});
  } catch (const std::exception&) { // the next job starts its own
    drop_spare();
  }
}

void runner_pool::give_back() {
  drop_spare();
  m_held = true;
}

void runner_pool::drop_spare() {
  m_spare.reset();
  if (!m_spare_dir.empty()) m_used.push_back(m_spare_dir);
  m_spare_dir.clear();
}

void runner_pool::freeze(bool stopped) {
  if (m_spare) m_spare->freeze(stopped);
}

} // namespace kj::worker
