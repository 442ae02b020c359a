// Device slots (one per listed GPU, each with its CUDA_VISIBLE_DEVICES), --gpus and --jobs checks, and the
// progress line (counts, verdict tallies, throughput, ETA).
#include "engine/scheduler/scheduler.hpp"
#include "planning/orchestrator/run.hpp"
#include "planning/results/sinks.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>

using namespace kj::test;
using kj::results::clock_text;
using kj::results::progress_line;

namespace {

kj::results::evaluation_result judged(const std::string& verdict, const std::string& slot) {
  kj::results::evaluation_result r;
  r.problem = {1, 19, "ReLU", "19_ReLU.py"};
  r.candidate = {"identity", 0, ""};
  r.record.verdict = kj::parse_verdict(verdict).value();
  r.record.strict_verdict = verdict == "correct" ? kj::strict_verdict::pass : kj::strict_verdict::fail;
  r.record.strict_failed = verdict == "correct" ? "" : "nan,inf";
  r.record.duration_s = 2.14;
  r.slot = slot;
  return r;
}

// CUDA_VISIBLE_DEVICES as kj's own process sees it, while it lives (null: unset); as before afterwards.
struct visible_devices {
  explicit visible_devices(const char* value) {
    const char* now = std::getenv("CUDA_VISIBLE_DEVICES");
    m_had = now != nullptr;
    if (now) m_saved = now;
    if (value)
      ::setenv("CUDA_VISIBLE_DEVICES", value, 1);
    else
      ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  ~visible_devices() {
    if (m_had)
      ::setenv("CUDA_VISIBLE_DEVICES", m_saved.c_str(), 1);
    else
      ::unsetenv("CUDA_VISIBLE_DEVICES");
  }
  visible_devices(const visible_devices&) = delete;
  visible_devices& operator=(const visible_devices&) = delete;

private:
  bool m_had = false;
  std::string m_saved;
};

} // namespace

TEST_CASE("one device slot per listed GPU, each with its CUDA_VISIBLE_DEVICES") {
  const visible_devices every(nullptr); // kj itself sees every GPU
  const auto slots = kj::scheduler::device_slots(kj::device_kind::cuda, {0, 2});
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].name == "cuda:0");
  CHECK(slots[0].environment.at("CUDA_VISIBLE_DEVICES") == "0");
  CHECK(slots[1].name == "cuda:2");
  CHECK(slots[1].environment.at("CUDA_VISIBLE_DEVICES") == "2");
  const auto cpu = kj::scheduler::device_slots(kj::device_kind::cpu, {});
  REQUIRE(cpu.size() == 1);
  CHECK(cpu[0].name == "cpu");
  CHECK(cpu[0].environment.empty());
}

TEST_CASE("under CUDA_VISIBLE_DEVICES, a slot's GPU is the list's entry (a Ray task, a Slurm job, a user's "
          "shell)") {
  using kj::scheduler::worker_gpu;
  CHECK(worker_gpu(1, nullptr) == "1");
  CHECK(worker_gpu(1, "") == "1");
  CHECK(worker_gpu(0, "3") == "3"); // torch's GPU 0 is the machine's GPU 3: never GPU 0
  CHECK(worker_gpu(1, "3,5") == "5");
  CHECK(worker_gpu(1, "GPU-8a1f, GPU-77c0") == "GPU-77c0");
  CHECK(worker_gpu(0, "MIG-4b2e") == "MIG-4b2e");
  CHECK_THROWS_AS(worker_gpu(2, "3,5"), std::invalid_argument); // never the machine's GPU 2
  const visible_devices shown("6,2");
  const auto slots = kj::scheduler::device_slots(kj::device_kind::cuda, {1, 0});
  REQUIRE(slots.size() == 2);
  CHECK(slots[0].name == "cuda:1"); // named by torch's number, as --gpus and the results name it
  CHECK(slots[0].environment.at("CUDA_VISIBLE_DEVICES") == "2");
  CHECK(slots[1].environment.at("CUDA_VISIBLE_DEVICES") == "6");
}

TEST_CASE("the GPUs of a run: every visible one by default, listed ones checked") {
  using kj::orchestrator::resolve_gpus;
  const nlohmann::json two{{"device_count", 2}};
  CHECK(resolve_gpus({}, two) == std::vector<int>{0, 1});
  CHECK(resolve_gpus({1}, two) == std::vector<int>{1});
  CHECK(resolve_gpus({1, 0}, two) == std::vector<int>{1, 0});
  try {
    resolve_gpus({0, 2}, two);
    FAIL("GPU 2 of 2 was accepted");
  } catch (const kj::kb::source_error& e) {
    CHECK(contains(e.what(), "--gpus: GPU 2 is not visible (torch sees 2 GPU(s): 0-1)"));
  }
  try {
    resolve_gpus({1, 1}, two);
    FAIL("a GPU listed twice was accepted");
  } catch (const kj::kb::source_error& e) {
    CHECK(contains(e.what(), "GPU 1 is listed twice"));
  }
}

TEST_CASE("kj run refuses --gpus on the CPU and a --jobs that is not positive, before starting anything") {
  scratch_dir dir;
  const std::string db = (dir / "kj.sqlite").string();
  const auto cpu = run_kj({"run", "--device", "cpu", "--gpus", "0,1", "--db", db});
  CHECK(cpu.exit_code == 2);
  CHECK(contains(cpu.err, "--gpus 0,1 with --device cpu"));
  const auto negative = run_kj({"run", "--device", "cpu", "--gpus", "-1", "--db", db});
  CHECK(negative.exit_code == 2);
  CHECK(contains(negative.err, "--gpus"));
  const auto jobs = run_kj({"run", "--device", "cpu", "--jobs", "0", "--db", db});
  CHECK(jobs.exit_code == 2);
  CHECK(contains(jobs.err, "--jobs"));
  CHECK_FALSE(std::filesystem::exists(db));
  const auto help = run_kj({"run", "--help"});
  for (const char* option : {"--gpus", "-j,--jobs", "--shard", "--progress", "--run-id"})
    CHECK(contains(help.out, option));
}

TEST_CASE("a progress line: count, verdict, slot, tallies, throughput and ETA") {
  kj::results::progress_counts counts;
  counts.planned = 40;
  counts.done = 3;
  counts.tally = {{"correct", 2}, {"incorrect", 1}};
  counts.elapsed_s = 45; // 15 s per candidate: 4/min, 37 left
  const std::string line = progress_line(judged("incorrect", "cuda:1"), counts);
  INFO(line);
  CHECK(line.starts_with("[  3/40] L1 19_ReLU "));
  CHECK(contains(line, "identity s0: incorrect, strict fail [nan,inf] (2.1 s, cuda:1)"));
  CHECK(contains(line, "| 2 correct, 1 incorrect |"));
  CHECK(contains(line, "4.0/min, ETA 9:15"));
  // A CPU run has one slot: it is not named.
  const std::string cpu = progress_line(judged("correct", "cpu"), counts);
  CHECK(contains(cpu, "strict pass (2.1 s) |"));
  counts.done = counts.planned;
  CHECK(contains(progress_line(judged("correct", "cuda:0"), counts), "ETA 0:00"));
}

TEST_CASE("ETA and durations read as m:ss, with hours when there are any") {
  CHECK(clock_text(0) == "0:00");
  CHECK(clock_text(-3) == "0:00");
  CHECK(clock_text(7.4) == "0:07");
  CHECK(clock_text(552) == "9:12");
  CHECK(clock_text(3723) == "1:02:03");
  CHECK(clock_text(36000) == "10:00:00");
}

TEST_CASE("builds beside timing leave two cores per device slot and one more free") {
  const long cores = std::max(1u, std::thread::hardware_concurrency());
  CHECK(kj::scheduler::default_build_jobs() == std::clamp<long>(cores, 1, 8));
  CHECK(kj::scheduler::default_build_jobs(1) == std::clamp<long>(cores - 3, 1, 8));
  CHECK(kj::scheduler::default_build_jobs(8) == std::clamp<long>(cores - 17, 1, 8));
}
