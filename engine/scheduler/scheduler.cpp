// Implements the scheduler: build-pool threads and one thread per device slot, sharing one task table.
#include "engine/scheduler/scheduler.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>

namespace kj::scheduler {

bool needs_build(const std::string& candidate_source) {
  return candidate_source.find("cpp_extension") != std::string::npos;
}

int default_build_jobs(std::size_t beside_slots) {
  const long cores = std::max(1u, std::thread::hardware_concurrency());
  const long free = beside_slots ? cores - 2 * static_cast<long>(beside_slots) - 1 : cores;
  return static_cast<int>(std::clamp<long>(free, 1, 8));
}

std::string worker_gpu(int gpu, const char* visible) {
  if (!visible || !*visible) return std::to_string(gpu);
  std::vector<std::string> entries; // "3,5", "GPU-8a1f...,GPU-77c0...", "MIG-..."
  std::string_view rest = visible;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    while (!entry.empty() && entry.front() == ' ')
      entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ')
      entry.remove_suffix(1);
    entries.emplace_back(entry);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  // torch numbers only what the list shows (up to its first invalid entry); resolve_gpus refused any other
  if (gpu < 0 || static_cast<std::size_t>(gpu) >= entries.size())
    throw std::invalid_argument("GPU " + std::to_string(gpu) + " is not in CUDA_VISIBLE_DEVICES=" + visible);
  return entries[static_cast<std::size_t>(gpu)];
}

std::vector<device_slot> device_slots(device_kind device, const std::vector<int>& gpus) {
  if (device != device_kind::cuda) return {{"cpu", {}}};
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<device_slot> slots;
  for (int gpu : gpus.empty() ? std::vector<int>{0} : gpus)
    slots.push_back({"cuda:" + std::to_string(gpu), {{"CUDA_VISIBLE_DEVICES", worker_gpu(gpu, visible)}}});
  return slots;
}

namespace {

struct state {
  struct entry {
    task work;
    std::vector<build_done> builds;
    std::size_t builds_left = 0;
    std::optional<device_step> device;
  };
  std::deque<std::unique_ptr<entry>> entries;
  std::deque<std::pair<std::size_t, std::size_t>> build_queue; // (entry, build)
  std::set<std::size_t> ready;                                 // entries waiting for a device slot
  std::size_t builds_running = 0, unfinished = 0;
  bool stop = false;
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable changed;
  std::mutex callbacks; // planner callbacks run one at a time
};

// Adds tasks; those without builds are planned at once. Called without the state's lock held.
void add(state& s, std::vector<task> tasks);

// The device step (or the end) of an entry whose builds are done.
void after_builds(state& s, std::size_t index) {
  auto& e = *s.entries[index];
  std::optional<device_step> device;
  std::vector<task> more;
  {
    std::lock_guard callbacks(s.callbacks);
    if (e.work.plan_device) device = e.work.plan_device(e.builds);
    if (!device && e.work.finish) more = e.work.finish(e.builds, nullptr);
  }
  add(s, std::move(more));
  std::lock_guard lock(s.mutex);
  if (device) {
    e.device = std::move(device);
    s.ready.insert(index);
  } else {
    --s.unfinished;
  }
  s.changed.notify_all();
}

void add(state& s, std::vector<task> tasks) {
  std::vector<std::size_t> no_builds;
  {
    std::lock_guard lock(s.mutex);
    for (auto& t : tasks) {
      const std::size_t index = s.entries.size();
      auto e = std::make_unique<state::entry>();
      e->builds.resize(t.builds.size());
      e->builds_left = t.builds.size();
      for (std::size_t b = 0; b < t.builds.size(); ++b)
        s.build_queue.emplace_back(index, b);
      if (t.builds.empty()) no_builds.push_back(index);
      e->work = std::move(t);
      s.entries.push_back(std::move(e));
      ++s.unfinished;
    }
    s.changed.notify_all();
  }
  for (std::size_t index : no_builds)
    after_builds(s, index);
}

// Runs `body`; an exception stops the run and is kept for run() to rethrow.
template <typename F>
void guarded(state& s, F&& body) {
  try {
    body();
  } catch (...) {
    std::lock_guard lock(s.mutex);
    if (!s.error) s.error = std::current_exception();
    s.stop = true;
    s.changed.notify_all();
  }
}

// Waits until `ready` holds or the run is over; false when it is over. Polls for Ctrl-C.
template <typename P>
bool wait_for_work(state& s, std::unique_lock<std::mutex>& lock, P ready) {
  while (true) {
    if (exec::interrupt_requested()) s.stop = true;
    if (s.stop || s.unfinished == 0) return false;
    if (ready()) return true;
    s.changed.wait_for(lock, std::chrono::milliseconds(200));
  }
}

} // namespace

scheduler::scheduler(const exec::job_runner& runner, const exec::build_cache& cache, options opts)
    : m_runner(runner), m_cache(cache), m_options(std::move(opts)) {
  if (m_options.slots.empty()) throw std::invalid_argument("scheduler: no device slot");
}

bool scheduler::run(std::vector<task> tasks) const {
  state s;
  const auto build_worker = [&] {
    guarded(s, [&] {
      std::unique_lock lock(s.mutex);
      while (wait_for_work(s, lock, [&] { return !s.build_queue.empty(); })) {
        const auto [index, b] = s.build_queue.front();
        s.build_queue.pop_front();
        ++s.builds_running;
        state::entry& e = *s.entries[index];
        lock.unlock();
        const build_step& step = e.work.builds[b];
        const std::string& label = e.work.label.empty() ? e.work.name : e.work.label;
        if (m_options.observer) m_options.observer->started(true, label, "");
        build_done done;
        // With one device slot a build stands still while it times (exec/quiet_builds.hpp); with several,
        // some slot times nearly always and builds would starve: they run at SCHED_IDLE on the cores the
        // slots leave (default_build_jobs).
        exec::launch_spec launch = step.launch;
        launch.quiet_while_timing = launch.quiet_while_timing && m_options.slots.size() == 1;
        if (!step.cache_key.empty()) {
          done.record = m_cache.build(m_runner, step.cache_key, step.message, launch);
        } else {
          done.outcome = m_runner.run(step.message, launch, &done.log_tail);
        }
        if (m_options.observer) m_options.observer->finished(true, label, "");
        lock.lock();
        e.builds[b] = std::move(done);
        --s.builds_running;
        const bool last = --e.builds_left == 0;
        s.changed.notify_all();
        // A build cut by Ctrl-C says nothing of the candidate: its evaluation is left for the resume.
        const bool cut = exec::interrupt_requested() || e.builds[b].outcome.interrupted ||
                         e.builds[b].record.end == exec::build_end::interrupted;
        if (cut) s.stop = true;
        if (last && !s.stop) {
          lock.unlock();
          after_builds(s, index);
          lock.lock();
        }
      }
    });
  };
  const auto slot_worker = [&](const device_slot& slot) {
    exec::warm_worker warm(m_runner); // the slot's judge, kept warm between evaluations
    guarded(s, [&] {
      std::unique_lock lock(s.mutex);
      const auto may_start = [&] {
        return !s.ready.empty() && (m_options.overlap || (s.build_queue.empty() && s.builds_running == 0));
      };
      while (wait_for_work(s, lock, may_start)) {
        const std::size_t index = *s.ready.begin();
        s.ready.erase(s.ready.begin());
        // Another entry unfinished (ready, building, or on another slot) may still come to this slot.
        const bool more_jobs = s.unfinished > 1;
        state::entry& e = *s.entries[index];
        lock.unlock();
        device_step& step = *e.device;
        if (auto* evaluation = std::get_if<exec::evaluate_job>(&step.message))
          evaluation->more_jobs = more_jobs;
        for (const auto& [key, value] : slot.environment)
          step.launch.environment[key] = value;
        device_done done{{}, "", slot.name};
        const std::string& label = e.work.label.empty() ? e.work.name : e.work.label;
        if (m_options.observer) m_options.observer->started(false, label, slot.name);
        done.outcome = step.warm ? warm.run(step.message, step.launch, &done.log_tail, step.on_event)
                                 : m_runner.run(step.message, step.launch, &done.log_tail, step.on_event);
        if (m_options.observer) m_options.observer->finished(false, label, slot.name);
        std::vector<task> more;
        if (!done.outcome.interrupted) {
          std::lock_guard callbacks(s.callbacks);
          if (e.work.finish) more = e.work.finish(e.builds, &done);
        }
        add(s, std::move(more));
        lock.lock();
        --s.unfinished;
        s.changed.notify_all();
      }
    });
  };

  add(s, std::move(tasks));
  const int builders = m_options.build_jobs > 0
                           ? m_options.build_jobs
                           : default_build_jobs(m_options.overlap ? m_options.slots.size() : 0);
  std::vector<std::thread> threads;
  for (int i = 0; i < builders; ++i)
    threads.emplace_back(build_worker);
  for (const auto& slot : m_options.slots)
    threads.emplace_back(slot_worker, std::cref(slot));
  for (auto& t : threads)
    t.join();
  if (s.error) std::rethrow_exception(s.error);
  return !exec::interrupt_requested();
}

} // namespace kj::scheduler
