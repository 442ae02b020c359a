// Result records and the sinks that consume them (google/benchmark's reporters): the DB writer, the console
// progress view, an in-memory collector. The scheduler and the planners know nothing of output formats.
#pragma once

#include "db/store.hpp"
#include "engine/exec/build_cache.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kj::results {

struct problem_label {
  int level = 0;
  int number = 0;
  std::string name;
  std::string file_name;
};

struct candidate_label {
  std::string producer;
  int sample = 0;
  std::string path;
};

// One judged candidate. The DB sink sets evaluation_id.
struct evaluation_result {
  problem_label problem;
  candidate_label candidate;
  db::evaluation_record record;
  std::optional<exec::build_record> build; // when the candidate compiles anything
  std::string slot;                        // the device slot that ran it ("" when no worker ran)
  std::int64_t evaluation_id = 0;
};

// One baseline (problem, mode). The DB sink sets record.id when it writes a measured row.
struct baseline_result {
  problem_label problem;
  std::string mode;
  db::baseline_record record;
  bool cached = false; // found in the DB, not measured now
};

class result_sink {
public:
  virtual ~result_sink() = default;
  virtual void begin(std::size_t /*planned*/, std::size_t /*skipped*/) {}
  virtual void evaluation(evaluation_result& /*result*/) {}
  virtual void baseline(baseline_result& /*result*/) {}
  virtual void end(bool /*interrupted*/) {}
};

// Hands every record to each sink in turn (the DB writer first, so that the others see its ids).
class sink_set final : public result_sink {
public:
  explicit sink_set(std::vector<result_sink*> sinks) : m_sinks(std::move(sinks)) {}
  void begin(std::size_t planned, std::size_t skipped) override;
  void evaluation(evaluation_result& result) override;
  void baseline(baseline_result& result) override;
  void end(bool interrupted) override;

private:
  std::vector<result_sink*> m_sinks;
};

// Keeps every record (the agent's tools read results this way; tests too).
class memory_sink final : public result_sink {
public:
  void evaluation(evaluation_result& result) override { evaluations.push_back(result); }
  void baseline(baseline_result& result) override { baselines.push_back(result); }
  std::vector<evaluation_result> evaluations;
  std::vector<baseline_result> baselines;
};

// The single DB writer: each evaluation (with its trials, samples and build) and each measured baseline is
// one transaction.
class db_sink final : public result_sink {
public:
  explicit db_sink(db::store& store) : m_store(store) {}
  void evaluation(evaluation_result& result) override;
  void baseline(baseline_result& result) override;

private:
  db::store& m_store;
};

// Where a run stands, as the progress view shows it.
struct progress_counts {
  std::size_t done = 0, planned = 0;
  std::map<std::string, std::size_t> tally; // verdict -> how many so far
  double elapsed_s = 0;                     // [s] since the first job was planned
};

// One progress line for a judged candidate: its number of the planned ones, problem, producer and sample,
// verdict (strict verdict and failing classes), its own time and slot, the tallies so far, the throughput
// (candidates per minute, every slot together) and the ETA at that throughput, e.g.
//   [  3/40] L1 19_ReLU  identity s0: correct, strict pass (2.1 s, cuda:1) | 2 correct, 1 incorrect |
//   4.2/min, ETA 9:12
std::string progress_line(const evaluation_result& result, const progress_counts& counts);
// "0:07", "9:12", "1:02:03": minutes and seconds, with hours when there are any.
std::string clock_text(double seconds);
// "2 correct, 1 incorrect": verdicts in name order.
std::string tally_text(const std::map<std::string, std::size_t>& tally);

// --progress: "always" (a line per judged candidate, and the heartbeat when kj is silent), "log" (a status
// line at a steady interval: counts, rate, ETA and what runs, for a CI log or nohup), "never", or "auto":
// always on a terminal, log elsewhere (a file, a pipe, a batch job).
enum class progress_mode { lines, log, none };
progress_mode progress_mode_for(const std::string& option);

// The console view on stderr: a progress_line per finished job (unless `quiet`), and the final tally.
// Stderr, not stdout: stdout carries the results table, which scripts capture (`kj run ... > table.txt` still
// shows progress on the terminal).

class progress_sink final : public result_sink {
public:
  explicit progress_sink(bool quiet);
  void begin(std::size_t planned, std::size_t skipped) override;
  void evaluation(evaluation_result& result) override;
  void end(bool interrupted) override;

private:
  bool m_quiet;
  progress_counts m_counts;
  std::chrono::steady_clock::time_point m_start;
};

} // namespace kj::results
