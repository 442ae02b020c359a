// Implements the build pool with a fixed set of threads, each driving one worker process at a time.
#include "harness/orchestrator/build_pool.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

namespace kj::orchestrator {

bool needs_build(const std::string& candidate_source) {
  return candidate_source.find("cpp_extension") != std::string::npos;
}

int default_build_jobs() {
  return static_cast<int>(std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8));
}

std::vector<build_outcome> build_all(const job_runner& runner, std::vector<build_request> requests,
                                     int parallel,
                                     const std::function<void(std::size_t, const build_outcome&)>& on_done) {
  std::vector<build_outcome> results(requests.size());
  std::atomic<std::size_t> next{0};
  std::mutex done_mutex;
  auto work = [&] {
    for (std::size_t i; (i = next++) < requests.size() && !interrupt_requested();) {
      if (requests[i].job.mode == "evaluate") requests[i].job.mode = "build"; // "baseline_compile" stays
      build_outcome& r = results[i];
      r.outcome = runner.run(requests[i].job, "build-" + requests[i].name, &r.log_tail);
      r.built = find_event(r.outcome, "built") != nullptr;
      if (on_done) {
        std::lock_guard lock(done_mutex);
        on_done(i, r);
      }
    }
  };
  std::vector<std::thread> threads;
  const int n = std::max(1, std::min<int>(parallel, static_cast<int>(requests.size())));
  for (int t = 0; t < n; ++t)
    threads.emplace_back(work);
  for (auto& t : threads)
    t.join();
  return results;
}

} // namespace kj::orchestrator
