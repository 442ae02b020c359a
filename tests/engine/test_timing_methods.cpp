// The timing methods are one table (engine/exec/timing_methods.cpp) with one implementation each in the
// worker (engine/worker/timing_bridge.cpp): every method in the table times a call on the host through the
// real time_callable, headlines the statistic the table names, and an unknown name is refused with the names
// there are.
#include "engine/exec/timing_methods.hpp"
#include "engine/worker/timing_bridge.hpp"
#include "tests/support/catch_compat.hpp"

#include <stdexcept>
#include <string>

TEST_CASE("every timing method in the table times a call on the host and headlines its statistic") {
  int calls = 0;
  const std::function<void()> call = [&] { ++calls; };
  kj::worker::device_context host;
  host.sync = [] {};
  host.empty_cache = [] {};
  for (const auto& method : kj::exec::timing_methods()) {
    INFO(method.name);
    kj::exec::timing_spec spec;
    spec.method = std::string(method.name);
    spec.max_time_ms = 20;
    spec.min_time_ms = 1;
    const int before = calls;
    const kj::worker::timing_result r = kj::worker::time_callable(call, host, spec);
    CHECK(calls > before);
    CHECK_FALSE(r.samples_ms.empty());
    CHECK(r.clock == "host");
    CHECK(r.params.value("headline", "") == (method.name == "cuda-agent" ? "median" : method.headline));
  }
  CHECK(kj::exec::timing_methods().front().name == "robust"); // the default first
  CHECK(kj::exec::timing_method_named("robust").fresh_inputs);
  CHECK_FALSE(kj::exec::timing_method_named("kernelbench").fresh_inputs);
}

TEST_CASE("an unknown timing method is refused with the names there are") {
  std::string message;
  try {
    kj::exec::timing_method_named("fastest");
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  CHECK(message.find("unknown timing method 'fastest'") != std::string::npos);
  CHECK(message.find("robust, kernelbench, cuda-agent") != std::string::npos);
}
