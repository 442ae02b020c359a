// Starts one `kj worker` process for a job and collects its events, with a wall-clock limit.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kj::exec {

struct worker_launch {
  std::filesystem::path job_file;
  std::filesystem::path log_file; // the worker's stdout and stderr (candidate prints, compiler output)
  // The job's time limit. An evaluation's judge reports whose time is whose ("clock" events): its deadline
  // then moves by kj's own time, which is bounded by `own_limit` instead (0: no bound of its own).
  std::chrono::milliseconds timeout{600'000};
  std::chrono::milliseconds own_limit{0};
  // The worker's whole environment: only what scrubbed_environment() lets through from kj's own, plus what
  // the launcher adds (build folder, device). Nothing else reaches a worker.
  std::map<std::string, std::string> environment;
  // A sandbox launcher (bwrap ... --) to start the worker under; empty: none (engine/exec/sandbox.hpp).
  std::vector<std::string> sandbox_prefix;
  int nice = 0; // > 0: a lower CPU priority and SCHED_IDLE (builds running beside timing)
  // A build: it stands still while a device slot times (engine/exec/quiet_builds.hpp); its time limit does
  // not count the pause.
  bool quiet_while_timing = false;
  // Runs `wrapper[0] wrapper[1..] <kj> worker ...` (after the sandbox launcher, if any): a profiler that
  // starts the worker and passes descriptor 3 on. wrapper[0] is looked up on the environment's PATH.
  std::vector<std::string> wrapper;
};

// The variables of kj's environment a worker may see: an allowlist of what Python, torch, compilers and CUDA
// read (PATH, HOME, locale, CUDA_*, TORCH_*, TRITON_*, ...), without any whose name looks like a secret
// (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL, AUTH): API keys and tokens never reach candidate code.
std::map<std::string, std::string> scrubbed_environment();

// Whether a variable name may be passed on (the rule scrubbed_environment applies).
bool passes_scrub(const std::string& name);

// The last "clock" event of an evaluation's judge (engine/worker/judge_clock.hpp).
struct judge_time {
  bool reported = false;
  double candidate_s = 0; // waiting for the candidate's process: charged to its limit
  double own_s = 0;       // everything else: kj's own
  bool waiting = false;   // the judge was waiting for the candidate's process
};

struct worker_outcome {
  std::vector<nlohmann::json> events; // every event but the clock's
  judge_time clock;
  bool timed_out = false;
  bool own_overrun = false; // kj's own time passed worker_launch::own_limit: kj's failure
  bool interrupted = false; // the user pressed Ctrl-C
  int exit_code = -1;       // when it exited
  int term_signal = 0;      // when a signal ended it
  double wall_s = 0;
  double stood_still_s = 0; // [s] of wall_s a build stood still while a device slot timed
  double first_event_s =
      0;                   // [s] from the launch to the worker's first report (its start, Python and imports)
  double last_event_s = 0; // [s] from the launch to its last report (then only its exit remains)
  std::string bad_lines;   // report lines that were not JSON (kept for the error text)
};

// Runs the worker in its own process group with descriptors 0-3 only (stdin /dev/null, stdout and stderr to
// the log file, 3 the report pipe): nothing else kj holds open reaches it; on timeout or interrupt the whole
// group is killed. Leftover processes of the group (threads are not a concern, child processes are) are
// killed when the worker exits.
worker_outcome run_worker_process(const worker_launch& launch,
                                  const std::function<void(const nlohmann::json&)>& on_event = {});

// Every descendant of `root` (children, theirs, and orphans reparented to a root that reaps), from /proc.
std::vector<int> descendants(int root);
// The same from one listing of every process's parent (pid -> parent pid, process_parents()), so that several
// trees are read from one moment.
std::vector<int> descendants(const std::map<int, int>& parents, int root);
std::map<int, int> process_parents();

// The last `bytes` of a file, for error messages ("" when unreadable).
std::string file_tail(const std::filesystem::path& path, std::size_t bytes = 4000);

// Set by SIGINT/SIGTERM handlers that install_interrupt_handlers() installs.
bool interrupt_requested();
// Stops the jobs in flight and the run as Ctrl-C does (kj run --maxfail).
void request_interrupt();
void install_interrupt_handlers();

// A one-line description of how a worker ended ("killed by signal 11 (Segmentation fault)", ...).
std::string describe_exit(const worker_outcome& outcome);

} // namespace kj::exec
