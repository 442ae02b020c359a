// The judge's side of the runner: starts the candidate's process, sends it requests with a deadline, owns the
// arena the outputs come back in, watches its memory and process count, and kills it and everything it
// started.
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/exec/messages.hpp"
#include "engine/worker/judge_clock.hpp"
#include "engine/worker/line_socket.hpp"
#include "engine/worker/process_tree.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kj::worker {

inline constexpr std::uint64_t k_first_arena = 64ull << 20; // the arena's first size: larger outputs grow it

// A failure of the runner (the candidate's process), with the verdict it means.
struct runner_failure : std::runtime_error {
  runner_failure(std::string verdict, const std::string& error, std::string why = "")
      : std::runtime_error(error), kind(std::move(verdict)), reason(std::move(why)) {}
  std::string kind;
  std::string reason; // out_of_memory, or ""
};

struct runner_limits {
  std::uint64_t memory_bytes = 0;     // resident memory of the runner and its children; 0: half the machine's
  int processes = 256;                // the runner and its descendants
  std::size_t output_bytes = 1 << 20; // of its stdout/stderr kept (head and tail); the rest is counted only
};

struct runner_spec {
  device_kind device = device_kind::cpu;
  exec::source_file problem;
  exec::source_file candidate;
  std::map<std::string, std::int64_t> overrides;
  exec::protocol_spec protocol;
  std::filesystem::path scratch; // the runner's own folder (its working directory, HOME and TMPDIR)
  // The candidate's time limit: no request waits past what is left of it, and every wait after the load
  // began is charged to it (never null).
  std::shared_ptr<judge_clock> clock;
  runner_limits limits;
  std::vector<std::filesystem::path> read_only; // what the sandbox exposes besides the system folders
  bool import_on_device =
      false; // the build step deferred the import: the runner may compile (build folder rw)
  // The folder torch's extension cache names in the runner (TORCH_EXTENSIONS_DIR, read-only unless
  // import_on_device); empty: the judge's own TORCH_EXTENSIONS_DIR. A runner started ahead (runner_pool) has
  // an empty one of its own, which `adopt` fills with the job's.
  std::filesystem::path extensions;
  // The environment it starts from (then scrubbed and completed); empty: the judge's own at its launch. A
  // serving judge's runners start from the judge's at its start, whatever a problem module set since.
  std::map<std::string, std::string> environment;
};

class runner_link {
public:
  // Starts the runner and loads problem and candidate; load() tells how that went.
  runner_link(runner_spec spec, const cuda::plugin* plugin);
  // Starts only the runner's process, which imports torch meanwhile (the judge starts it before importing
  // torch itself: the two start-ups overlap); connect() then loads problem and candidate.
  explicit runner_link(runner_spec spec);
  // Starts a runner ahead of its job (runner_pool): a spare (wait_for_candidate) until `adopt` gives it one.
  struct started_ahead_t {};
  runner_link(runner_spec spec, started_ahead_t);
  // After the launch-only constructor, once: the runner's hello and the load (load() tells how it went);
  // `plugin` owns the device arena on CUDA (null on the CPU).
  void connect(const cuda::plugin* plugin);
  ~runner_link();
  runner_link(const runner_link&) = delete;
  runner_link& operator=(const runner_link&) = delete;

  // The reply of the load request ({"ok": false, "kind": ..., "error": ...} when it failed).
  const nlohmann::json& load() const { return m_load; }

  // One request. The reply is {"ok": true, ...} or {"ok": false, "kind", "error"}; when the runner died,
  // timed out or broke a limit, every later request gets that failure (kind crashed, timeout or oom) with the
  // end of its output. Replies with outputs carry "arena": the judge's view of the memory they are in.
  nlohmann::json request(const nlohmann::json& message);

  // One timed call of a round the judge drives (driven_round.hpp): "tg" goes out with the judge's clock read
  // just before, which is read again the moment the runner's first line (the sample) arrives; then the
  // runner's second line (the snapshot its reservoir took, if any). Either line may be a failure.
  struct go_reply {
    nlohmann::json sample, after;
    double bracket_ms = 0; // [ms] the judge's clock around the call
  };
  // trace: the sample is the call's traced kernel time (cuda-agent). On CUDA the judge polls without sleeping
  // from 0.7 x `expected_ms` (the call's usual time) on, so that its own wake-up stays out of the bracket.
  go_reply go(bool trace = false, double expected_ms = 0);
  // A request timed on the judge's clock (a driven round's prepare): the reply, and `bracket_ms` set.
  nlohmann::json timed_request(const nlohmann::json& message, double& bracket_ms, double expected_ms = 0);
  // The handshake measured at the runner's start, before the candidate was loaded (only kj's code ran): per
  // call, the judge's bracket less the runner's sample (go) and less its draw (prepare) [ms]. Empty when the
  // calibration failed (`error` says why).
  struct handshake_sample {
    std::vector<double> go_ms, prepare_ms;
    std::string error;
  };
  const handshake_sample& handshake_calibration() const { return m_calibration; }

  bool alive() const { return !m_dead; }
  // A runner started ahead waits for a candidate (runner_pool): while it does, its processes are its own
  // tree, never the running candidate's (process_tree.hpp `spare`).
  void wait_for_candidate(bool waiting);
  // Whether it was started as `job` would start it (device, limits, sandbox paths), so that it may take it.
  bool launched_like(const runner_spec& job) const;
  // Gives a runner started ahead (launch-only constructor, not yet connected) its job: the job's built
  // extensions are copied into its own folder, and problem, candidate, overrides, protocol and clock are the
  // job's. connect() follows.
  void adopt(const runner_spec& job);
  // Whether the load failed before the candidate's code was loaded (kj's runner did not start): a runner
  // started ahead that failed so is replaced, never blamed on the candidate.
  bool failed_before_load() const { return m_failed_before_load; }
  // Tests: kills the runner's process as a crash would (KJ_TEST_FAULT=spare).
  void kill_for_test() const;
  // The candidate's time limit and what it has used.
  const judge_clock& clock() const { return *m_spec.clock; }
  // Gives back to the candidate's clock `ms` of the last charged wait: kj's own work its process did.
  void refund_own_work(double ms) { m_spec.clock->refund(ms); }
  // The next request's first `ms` of waiting is kj's own work in the candidate's process (the draw of a
  // checked call's inputs, bounded by the judge's own draw), not charged to its clock.
  void allow_next(double ms) {
    m_allowance = std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000));
  }
  // [ms] the most of a timed call's reported draw given back so (about the judge's own draw of a call's
  // inputs, measured before the candidate's first round; 0: none, only the calibrated flush).
  void set_own_draw_cap_ms(double ms) { m_own_draw_cap_ms = ms; }
  double own_draw_cap_ms() const { return m_own_draw_cap_ms; }
  // Stops (SIGSTOP) or resumes the runner and everything it started, so that nothing of the candidate's runs
  // while the judge times the reference: a thread or process it left behind cannot slow the reference down.
  // A CUDA runner started ahead that is still importing Python and torch goes on (the CPU's work), and starts
  // its device only once the judge no longer times (runner_start.cpp).
  void freeze(bool stopped);
  // Stops (SIGSTOP) or resumes a runner started ahead for a moment (another runner's calibration); one that
  // freeze() stopped is left as it is.
  void pause(bool paused);
  // A serving judge's pool around this runner's (re)starts (runner_pool): `pause` around the handshake's
  // calibration, so that the next job's runner stands still while it is measured; `leaving_namespace` before
  // the runner starts again in kj's PID namespace (its device cannot share memory by descriptor), so that the
  // next job's runner is gone before the candidate is loaded there.
  struct neighbours {
    std::function<void(bool)> pause;
    std::function<void()> leaving_namespace;
  };
  void set_neighbours(neighbours n) { m_neighbours = std::move(n); }
  // Starts a fresh runner (after a crash), loading the same problem and candidate; false when that fails.
  bool restart();
  // What the runner printed: its first and last bytes.
  std::string output() const;
  // After the judge has taken a reply's outputs: a large arena is unmapped by the runner (which also drops
  // its copy and returns its cached device memory) and freed, so that no case starts with the last one's
  // held.
  void release_arena();
  // Makes the arena at least `bytes` large before a request whose outputs go into it (a timing round's
  // snapshots); the reply fields of a kj's own failure to allocate ({"ok": false, "kind": "harness_error"}),
  // else {"ok": true}.
  nlohmann::json reserve_arena(std::uint64_t bytes);
  // Copies `bytes` of the arena at `offset` into the judge's vault (memory of the same size the runner never
  // sees, made by reserve_arena): a snapshot is the judge's before the candidate's code runs again.
  void take_snapshot(std::uint64_t offset, std::uint64_t bytes);
  // The vault as the judge's Python reads it ({"kind": "cuda", "ptr"} or {"kind": "file", "path"}, "bytes").
  nlohmann::json vault_spec() const;
  // Why the runner runs in kj's PID namespace (its device cannot share memory by descriptor); "" otherwise.
  const std::string& isolation_note() const { return m_isolation_note; }
  // The largest resident memory of the runner and its descendants seen by the watchdog [bytes].
  std::uint64_t peak_rss() const { return m_peak_rss; }

private:
  void start();
  void launch();
  void handshake();
  nlohmann::json first_words();  // the runner's start: its import stage answered, then its ready (or failure)
  void start_device_when_free(); // m_starter's work (a runner started ahead)
  void end_starter();
  void stop();
  nlohmann::json exchange(const nlohmann::json& message, int pass_fd = -1);
  nlohmann::json next_reply(const std::string& op, const line_socket::spin_window& spin = {});
  void calibrate();
  void free_vault() noexcept;
  nlohmann::json grow_arena(std::uint64_t bytes);
  void free_arena() noexcept;
  nlohmann::json died(const std::string& during);
  nlohmann::json death() const;
  void watch();
  void capture(int fd);
  std::vector<int> processes() const;      // the candidate's, or its own tree while it waits for one
  void stop_or_resume(bool stopped) const; // SIGSTOP or SIGCONT to every process of processes()
  void kill_processes();

  runner_spec m_spec;
  std::atomic<bool> m_waiting{false}; // started ahead, waiting for its candidate
  bool m_failed_before_load = false;
  const cuda::plugin* m_plugin;
  nlohmann::json m_load;
  std::unique_ptr<line_socket> m_socket;
  int m_pid = -1;
  std::atomic<bool> m_dead{false};
  std::string m_death_kind, m_death_text, m_death_reason;
  double m_own_draw_cap_ms = 0;
  std::chrono::microseconds m_allowance{0}; // of the next request's wait (allow_next)
  bool m_charging = false;                  // waits are charged to the candidate: from its load on
  bool m_sandboxed = false; // started through bubblewrap, which reports a signal as 128 + its number
  std::filesystem::path m_writable_build; // a deferred build's folder, the runner's while it compiles
  std::atomic<bool> m_stop_threads{false};
  std::thread m_watchdog, m_reader;
  std::thread m_starter;   // a runner started ahead: answers its import stage, never while frozen
  std::mutex m_gate_mutex; // guards the four below
  std::condition_variable m_gate;
  bool m_frozen = false;
  bool m_device_started = false;    // start_device sent by m_starter
  bool m_stopped_by_freeze = false; // SIGSTOP sent by freeze(true)
  std::string m_first_line;         // what m_starter read instead of the import stage (a failure)
  mutable std::mutex m_output_mutex;
  std::string m_head, m_tail;
  std::uint64_t m_output_total = 0;
  std::mutex m_limit_mutex;
  std::string m_limit_broken; // set by the watchdog: "oom: ..." or "processes: ..."
  std::atomic<std::uint64_t> m_peak_rss{0};
  // the arena; its ids grow over the judge's life, restarts included, so that no view of an old one is reused
  int m_arena_id = 0;
  std::uint64_t m_arena_bytes = 0, m_arena_ptr = 0;
  std::filesystem::path m_arena_path; // the judge's view: /proc/self/fd/N of the CPU arena
  int m_arena_fd = -1;                // the CPU arena's memfd
  nlohmann::json m_arena_spec;
  bool m_arena_shared = false;  // a CUDA arena exported by descriptor (share_alloc), not by IPC handle
  bool m_share_fd = true;       // CUDA arenas go by descriptor, and the runner has a PID namespace
  std::string m_isolation_note; // why the runner shares kj's PID namespace, when it does
  handshake_sample m_calibration;
  neighbours m_neighbours;
  std::uint64_t m_vault_bytes = 0, m_vault_ptr = 0; // the judge's own copy of the snapshot slots
  int m_vault_fd = -1;
};

// While it lives, the runner is frozen (runner_link::freeze).
class frozen_runner {
public:
  explicit frozen_runner(runner_link& runner) : m_runner(runner) { m_runner.freeze(true); }
  ~frozen_runner() { m_runner.freeze(false); }
  frozen_runner(const frozen_runner&) = delete;
  frozen_runner& operator=(const frozen_runner&) = delete;

private:
  runner_link& m_runner;
};

} // namespace kj::worker
