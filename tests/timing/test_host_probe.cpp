// Tests the host probe (behaviour only: no assertions on measured times) and host_change.
#include "tests/support/catch_compat.hpp"
#include "timing/host_probe.hpp"

#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

using kj::timing::host_change;
using kj::timing::host_probe;
using kj::timing::host_probe_result;

TEST_CASE("host_change is the relative spread of the core's probe", "[timing][host_probe]") {
  CHECK(host_change({}) == 0);
  CHECK(host_change({{2.0, 10.0}}) == 0);
  CHECK(host_change({{2.0, 10.0}, {2.0, 10.0}}) == 0);
  CHECK(host_change({{2.0, 10.0}, {2.2, 10.0}}) == Approx(0.10));
  CHECK(host_change({{2.0, 10.0}, {2.4, 12.0}, {2.1, 9.0}}) == Approx(0.20));
  CHECK(host_change({{2.0, 10.0}, {2.0, 30.0}}) == 0); // the memory chase is not counted
  // the order does not matter: a faster probe later counts as much as a slower one
  CHECK(host_change({{2.2, 10.0}, {2.0, 10.0}}) == Approx(0.10));
}

TEST_CASE("host_change skips probes that measured nothing", "[timing][host_probe]") {
  CHECK(host_change({{0.0, 0.0}, {2.0, 10.0}}) == 0);
  CHECK(host_change({{0.0, 10.0}, {2.0, 11.0}, {2.2, 10.0}}) == Approx(0.10));
}

namespace {
// An attempt that reports the next of a scripted series of host changes, with its index as the result.
struct scripted_attempts {
  std::vector<double> changes;
  int calls = 0;
  std::pair<int, double> operator()() {
    const int i = calls++;
    return {i, changes.at(static_cast<std::size_t>(i))};
  }
};
} // namespace

TEST_CASE("steadiest_attempt times again while the host moved and time is left, and keeps the steadiest",
          "[timing][host_probe]") {
  using kj::timing::steadiest_attempt;
  const auto always = [] { return true; };
  scripted_attempts steady{{0.02}};
  const auto once = steadiest_attempt(std::ref(steady), 3, 0.10, always);
  CHECK((once.result == 0 && once.attempts == 1 && steady.calls == 1));

  scripted_attempts settles{{0.30, 0.05, 0.01}};
  const auto second = steadiest_attempt(std::ref(settles), 3, 0.10, always);
  CHECK((second.result == 1 && second.attempts == 2 && second.change == Approx(0.05) && settles.calls == 2));

  scripted_attempts noisy{{0.30, 0.20, 0.25, 0.0}};
  const auto best = steadiest_attempt(std::ref(noisy), 3, 0.10, always);
  CHECK((best.result == 1 && best.attempts == 3 && best.change == Approx(0.20) && noisy.calls == 3));

  // no time left for another attempt (the job's deadline): the first is kept, however much the host moved
  scripted_attempts late{{0.30, 0.01}};
  const auto no_time = steadiest_attempt(std::ref(late), 3, 0.10, [] { return false; });
  CHECK((no_time.result == 0 && no_time.attempts == 1 && late.calls == 1));
}

TEST_CASE("host_probe chases one cycle through every cache line of its buffer", "[timing][host_probe]") {
  for (std::size_t bytes : {std::size_t{128}, std::size_t{4096}, std::size_t{1} << 20}) {
    const host_probe probe(bytes, 16, 16);
    CHECK(probe.chase_lines() == bytes / 64);
    CHECK(probe.chase_cycle_lines() == bytes / 64);
  }
}

TEST_CASE("host_probe measures both workloads", "[timing][host_probe]") {
  host_probe probe(std::size_t{1} << 20, std::size_t{1} << 12, std::size_t{1} << 12);
  const host_probe_result r = probe.measure(2);
  CHECK(r.cpu_ns > 0);
  CHECK(r.mem_ns > 0);
}

TEST_CASE("host_probe refuses an empty workload", "[timing][host_probe]") {
  CHECK_THROWS_AS(host_probe(4096, 0, 16), std::invalid_argument);
  CHECK_THROWS_AS(host_probe(4096, 16, 0), std::invalid_argument);
}
