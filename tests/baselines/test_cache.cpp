// The baseline cache key, the mode list and the reuse rule (planning/baselines/cache.cpp).
#include "planning/baselines/baselines.hpp"
#include "tests/support/catch_compat.hpp"

#include <string>

using namespace kj::baselines;

namespace {

key_fields sample_key() {
  key_fields k;
  k.problem_source_hash = "abc";
  k.overrides = {{"batch_size", 4}};
  k.precision = kj::precision::fp32;
  k.mode = "compile-default";
  k.device = "cuda";
  k.stack_hash = "stack-1";
  return k;
}

std::string key_of(const key_fields& k) {
  return cache_key(key_json(k));
}

std::string error_of(const std::string& modes) {
  try {
    parse_modes(modes);
  } catch (const kj::kb::source_error& e) {
    return e.what();
  }
  return "<no error>";
}

} // namespace

TEST_CASE("the cache key changes with every field a baseline depends on") {
  const std::string base = key_of(sample_key());
  CHECK(base.size() == 64);
  CHECK(key_of(sample_key()) == base);
  auto changed = [&](auto edit) {
    key_fields k = sample_key();
    edit(k);
    return key_of(k) != base;
  };
  CHECK(changed([](key_fields& k) { k.problem_source_hash = "abd"; }));
  CHECK(changed([](key_fields& k) { k.overrides["batch_size"] = 8; }));
  CHECK(changed([](key_fields& k) { k.precision = kj::precision::bf16; }));
  CHECK(changed([](key_fields& k) { k.mode = "max-autotune"; }));
  CHECK(changed([](key_fields& k) { k.device = "cpu"; }));
  CHECK(changed([](key_fields& k) { k.seed = 7; }));
  CHECK(changed([](key_fields& k) { k.eval_mode = true; }));
  CHECK(changed([](key_fields& k) { k.stack_hash = "stack-2"; }));
  CHECK(changed([](key_fields& k) { k.timing.method = "kernelbench"; }));
  CHECK(changed([](key_fields& k) { k.timing.max_time_ms = 1000; }));
  CHECK(changed([](key_fields& k) { k.timing.min_samples = 7; }));
  CHECK(changed([](key_fields& k) { k.timing.target_rel_ci = 0.01; }));
}

TEST_CASE("the cache key ignores switches of the candidate's timing pass") {
  const std::string base = key_of(sample_key());
  key_fields k = sample_key();
  k.timing.rounds = 1;    // a baseline is timed alone
  k.timing.graphs = true; // candidate-graph replays
  k.timing.floor = false; // the empty-forward floor
  k.timing.check_outputs = false;
  k.timing.enabled = false;
  CHECK(key_of(k) == base);
  CHECK_FALSE(key_json(k)["timing"].contains("rounds"));
  CHECK(key_json(k)["timing"]["method"] == "robust");
}

TEST_CASE("modes parse from a list, 'default' and 'all', and a wrong name is named") {
  CHECK(parse_modes("default") == default_modes);
  CHECK(parse_modes("all") == all_modes);
  CHECK(parse_modes("eager,compile-default,eager") == std::vector<std::string>{"eager", "compile-default"});
  CHECK(error_of("eager,max_autotune").find("unknown baseline mode 'max_autotune'") != std::string::npos);
  CHECK(error_of(",").find("no baseline mode") != std::string::npos);
  CHECK(std::find(default_modes.begin(), default_modes.end(), "reduce-overhead") == default_modes.end());
}

TEST_CASE("a cached row is reused unless its status may be transient or its time limit was shorter") {
  kj::db::baseline_record b;
  b.params_json = R"({"timeout_s": 600})";
  for (const char* status : {"ok", "compile_error", "runtime_error", "oom", "needs_weights"}) {
    b.status = status;
    CHECK(usable(b, 600));
  }
  for (const char* status : {"crashed", "harness_error", "not_run", "incorrect"}) {
    b.status = status;
    CHECK_FALSE(usable(b, 600));
  }
  b.status = "timeout";
  CHECK(usable(b, 600));
  CHECK(usable(b, 60));
  CHECK_FALSE(usable(b, 1200)); // a longer limit may let it finish
}

TEST_CASE("KernelBench's timing file names map to modes") {
  CHECK(mode_of_kernelbench_file("baseline_time_torch.json") == "eager");
  CHECK(mode_of_kernelbench_file("baseline_time_torch_compile_inductor_default.json") == "compile-default");
  CHECK(mode_of_kernelbench_file("baseline_time_torch_compile_inductor_max-autotune.json") == "max-autotune");
  CHECK(mode_of_kernelbench_file("baseline_time_torch_compile_inductor_max-autotune-no-cudagraphs.json") ==
        "max-autotune-no-cudagraphs");
  CHECK(mode_of_kernelbench_file("baseline_time_torch_compile_cudagraphs.json") == "backend-cudagraphs");
  CHECK(mode_of_kernelbench_file("README.md").empty());
  CHECK(mode_of_kernelbench_file("baseline_time_torch.csv").empty());
}
