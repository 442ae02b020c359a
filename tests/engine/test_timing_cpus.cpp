// timing_cpus (engine/worker/timing_cpus.hpp): KJ_TIMING_CPU=shared picks two CPUs of the thread's affinity,
// the pair of the slot's GPU; a thread pinned to one gets its affinity back afterwards.
#include "engine/worker/timing_cpus.hpp"
#include "tests/support/catch_compat.hpp"

#include <cstdlib>
#include <optional>
#include <string>

using kj::worker::choose_timing_cpus;
using kj::worker::thread_on_cpu;

namespace {

int allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(::sched_getaffinity(0, sizeof set, &set) == 0);
  return CPU_COUNT(&set);
}

// Sets (or unsets, nullopt) an environment variable while it lives.
struct env_var {
  env_var(const char* name, std::optional<std::string> value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~env_var() {
    if (m_old)
      ::setenv(m_name, m_old->c_str(), 1);
    else
      ::unsetenv(m_name);
  }
  const char* m_name;
  std::optional<std::string> m_old;
};

} // namespace

TEST_CASE("timing CPUs are chosen only when asked for, two of the thread's own, by the slot's GPU") {
  {
    const env_var off("KJ_TIMING_CPU", std::nullopt);
    CHECK_FALSE(choose_timing_cpus().on());
  }
  const env_var wrong("KJ_TIMING_CPU", "yes");
  CHECK_FALSE(choose_timing_cpus().on());
  if (allowed_cpus() < 2) {
    WARN("one CPU: no pair to choose");
    return;
  }
  const env_var on("KJ_TIMING_CPU", "shared");
  const env_var gpu0("CUDA_VISIBLE_DEVICES", "0");
  const auto first = choose_timing_cpus();
  REQUIRE(first.on());
  CHECK(first.timed != first.waiting);
  CHECK(first.to_json() == nlohmann::json{{"timed", first.timed}, {"waiting", first.waiting}});
  if (allowed_cpus() >= 4) {
    const env_var gpu1("CUDA_VISIBLE_DEVICES", "1");
    const auto second = choose_timing_cpus(); // another slot: another pair
    CHECK(second.timed != first.timed);
    CHECK(second.timed != first.waiting);
  }
}

TEST_CASE("a thread pinned to a CPU runs there and gets its affinity back") {
  cpu_set_t before;
  CPU_ZERO(&before);
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &before))
    ++cpu;
  {
    const thread_on_cpu pinned(cpu);
    CHECK(pinned.pinned());
    CHECK(::sched_getcpu() == cpu);
    cpu_set_t now;
    REQUIRE(::sched_getaffinity(0, sizeof now, &now) == 0);
    CHECK(CPU_COUNT(&now) == 1);
  }
  cpu_set_t after;
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));
  const thread_on_cpu none(-1); // not asked: nothing changes
  CHECK_FALSE(none.pinned());
  const thread_on_cpu impossible(CPU_SETSIZE - 1); // a CPU the thread may not use: nothing changes
  CHECK_FALSE(impossible.pinned());
}
