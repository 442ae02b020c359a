// Tests the host probe (behaviour only: no assertions on measured times) and host_change.
#include "harness/timing/host_probe.hpp"
#include "tests/support/catch_compat.hpp"

#include <stdexcept>

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
