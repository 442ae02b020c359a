// The profile tool's pieces without a worker: the speed-of-light arithmetic, the hardware table, Nsight
// Compute's raw CSV page, the text the model reads, and selection with its inflation.
#include "agent/feedback.hpp"
#include "agent/hardware.hpp"
#include "agent/ncu.hpp"
#include "agent/profile.hpp"
#include "agent/selection.hpp"
#include "tests/support/catch_compat.hpp"

using namespace kj;
using nlohmann::json;

namespace {

db::timing_record timing(const std::string& subject, double ms, const json& params = json::object()) {
  db::timing_record t;
  t.subject = subject;
  t.method = "robust";
  t.clock = "host";
  t.params_json = params.dump();
  t.samples_ms = {ms, ms, ms};
  t.median_ms = t.mean_ms = t.min_ms = t.max_ms = ms;
  return t;
}

db::evaluation_record evaluation(const std::string& verdict, const std::string& strict, double cand_ms,
                                 double eager_ms) {
  db::evaluation_record r;
  r.verdict = kj::parse_verdict(verdict).value();
  r.strict_verdict = kj::parse_strict_verdict(strict).value();
  r.protocol = "kernelbench-main";
  r.timings = {timing("candidate", cand_ms), timing("reference_eager", eager_ms)};
  return r;
}

} // namespace

TEST_CASE("speed of light: bytes over bandwidth and FLOPs over peak, the larger one bounds") {
  agent::problem_cost cost;
  cost.input_bytes = 4'000'000;
  cost.parameter_bytes = 1'000'000;
  cost.output_bytes = 5'000'000;
  cost.flops = 2'000'000'000;
  agent::peaks hw{.bandwidth_gbs = 1000, .tflops = 100};
  const auto sol = agent::estimate_speed_of_light(cost, hw);
  CHECK(*sol.memory_ms == Approx(0.01));  // 10 MB / 1000 GB/s
  CHECK(*sol.compute_ms == Approx(0.02)); // 2 GFLOP / 100 TFLOP/s
  CHECK(*sol.bound_ms() == Approx(0.02));
  cost.flops.reset();
  hw.bandwidth_gbs.reset();
  CHECK_FALSE(agent::estimate_speed_of_light(cost, hw).bound_ms());
}

TEST_CASE("GPU peaks come from the table by name and precision, configured values win, the CPU measures") {
  const json env{{"device_name", "NVIDIA H100 80GB HBM3"}};
  auto p = agent::device_peaks(env, "cuda", kj::precision::bf16, {});
  CHECK(*p.bandwidth_gbs == Approx(3350));
  CHECK(*p.tflops == Approx(989.4));
  CHECK(p.bandwidth_source.find("H100") != std::string::npos);
  CHECK(*agent::device_peaks({{"device_name", "NVIDIA H100 PCIe"}}, "cuda", kj::precision::fp32, {})
             .bandwidth_gbs == Approx(2000)); // the first matching entry wins
  const auto unknown = agent::device_peaks({{"device_name", "Mystery GPU"}}, "cuda", kj::precision::fp32, {});
  CHECK_FALSE(unknown.bandwidth_gbs);
  CHECK(unknown.bandwidth_source.find("--peak-bandwidth-gbs") != std::string::npos);
  const auto configured =
      agent::device_peaks(env, "cuda", kj::precision::fp32, {.bandwidth_gbs = 123, .tflops = 4.5});
  CHECK((*configured.bandwidth_gbs == 123 && *configured.tflops == 4.5));
  try {
    agent::device_peaks(env, "cuda", kj::precision::fp32,
                        {.table_text = "{\"gpus\": 3}", .table_name = "t.json"});
    FAIL("a malformed table was accepted");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("t.json") != std::string::npos);
  }
  const auto cpu = agent::device_peaks(json::object(), "cpu", kj::precision::fp32, {});
  REQUIRE(cpu.bandwidth_gbs);
  CHECK(*cpu.bandwidth_gbs > 0.1);
  CHECK(cpu.bandwidth_source.find("measured") != std::string::npos);
  CHECK_FALSE(cpu.tflops);
}

TEST_CASE("Nsight Compute's raw CSV page: units row skipped, thousands separators, top three stalls") {
  const std::string csv =
      "==PROF== Connected to process 4242 (/opt/kj/kj)\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
      "\"gpu__time_duration.sum\",\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed\","
      "\"sm__warps_active.avg.pct_of_peak_sustained_active\",\"launch__registers_per_thread\","
      "\"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_wait_per_issue_active.ratio\","
      "\"smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio\"\n"
      "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"nsecond\",\"%\",\"%\",\"%\",\"register/"
      "thread\",\"ratio\",\"ratio\","
      "\"ratio\",\"ratio\"\n"
      "\"0\",\"4242\",\"kj\",\"gpu1\",\"gelu_kernel\",\"1\",\"7\",\"12,345\",\"41.5\",\"88.25\",\"71\","
      "\"32\","
      "\"9.5\",\"0.25\",\"1.75\",\"0.5\"\n"
      "\"1\",\"4243\",\"kj\",\"gpu1\",\"void at::native::vectorized_elementwise_kernel<4, "
      "\"\"x\"\">\",\"1\",\"7\","
      "\"1,000\",\"n/a\",\"50\",\"60\",\"16\",\"0\",\"0\",\"0\",\"0\"\n"
      "==PROF== Disconnected from process 4242\n";
  const auto kernels = agent::parse_ncu_csv(csv);
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].name == "gelu_kernel");
  CHECK(kernels[0].process_id == "4242");
  CHECK(*kernels[0].duration_us == Approx(12.345));
  CHECK(*kernels[0].compute_pct == Approx(41.5));
  CHECK(*kernels[0].memory_pct == Approx(88.25));
  CHECK(*kernels[0].occupancy_pct == Approx(71));
  REQUIRE(kernels[0].stalls.size() == 3);
  CHECK(kernels[0].stalls[0].first == "long_scoreboard");
  CHECK(kernels[0].stalls[1].first == "wait");
  CHECK(kernels[0].stalls[2].first == "not_selected");
  CHECK(kernels[1].name == "void at::native::vectorized_elementwise_kernel<4, \"x\">");
  CHECK_FALSE(kernels[1].compute_pct);
  CHECK(kernels[1].stalls.empty());
  CHECK_THROWS(agent::parse_ncu_csv("\"ID\",\"Name\"\n"));
  CHECK(agent::kernel_base_name("void at::native::vectorized_elementwise_kernel<4, F, A<1>>(int, F)") ==
        "vectorized_elementwise_kernel");
  CHECK(agent::kernel_base_name("gelu_kernel(float const*, float*, long)") == "gelu_kernel");
  const auto wrapper = agent::ncu_wrapper("/usr/bin/ncu", "/tmp/r", 12);
  CHECK(wrapper.front() == "/usr/bin/ncu");
  CHECK(std::find(wrapper.begin(), wrapper.end(), "--launch-count") != wrapper.end());
  CHECK(agent::find_ncu("off").empty());
}

TEST_CASE("the profile text: the summary line first, times against each baseline, bounds, correctness") {
  db::evaluation_record r = evaluation("correct", "pass", 2.0, 5.0);
  agent::profile_facts f;
  f.record = &r;
  f.hash = "3f2a9c1e";
  f.device = "cpu";
  f.baselines = {{"compile-default", 3.0}};
  f.missing_modes = {"max-autotune"};
  f.cost.input_bytes = f.cost.output_bytes = 1'000'000;
  f.cost.parameter_bytes = 0;
  f.cost.flops = 0;
  f.hardware = {.bandwidth_gbs = 2, .bandwidth_source = "measured here"};
  const std::string text = agent::profile_text(f);
  INFO(text);
  CHECK(text.starts_with(
      "profile 3f2a9c1e: 2 ms, 2.50x vs eager, 1.50x vs compile-default; compatible correct, "
      "strict pass\n"));
  CHECK(text.find("you are 1.50x faster") != std::string::npos);
  CHECK(text.find("not measured on this stack: max-autotune") != std::string::npos);
  CHECK(text.find("memory bound: 1 ms") != std::string::npos); // 2 MB at 2 GB/s
  CHECK(text.find("reaches 50.0% of it") != std::string::npos);
  CHECK(text.find("no matrix product") != std::string::npos);
  CHECK(text.find("kernel trace: none on the CPU") != std::string::npos);
}

TEST_CASE("selection: the fastest strictly correct profiled version, inflation is in-loop over re-measured") {
  std::vector<agent::judged> history;
  history.push_back({"profile", 3, "h1", "s1", 1, 11, evaluation("correct", "pass", 2.0, 4.0)});
  history.push_back(
      {"profile", 5, "h2", "s2", 2, 12, evaluation("correct", "fail", 0.5, 4.0)}); // fast, wrong
  history.push_back({"profile", 7, "h3", "s3", 3, 13, evaluation("correct", "pass", 1.0, 4.1)});
  history.push_back({"verify", 9, "h4", "s4", 4, 14, evaluation("correct", "pass", 0, 0)});
  const agent::speedup_basis compile{"compile-default", 3.0};
  const auto best = agent::select_best(history, compile);
  REQUIRE(best.best);
  CHECK(best.best->candidate_id == 3);
  CHECK(*best.inloop_speedup == Approx(3.0));
  CHECK(*agent::speedup(history[0].record, {}) == Approx(2.0)); // eager: the evaluation's own
  // Without a profiled one, the latest strictly correct verified version, its speed unknown.
  const auto verified = agent::select_best({history[1], history[3]}, compile);
  REQUIRE(verified.best);
  CHECK(verified.best->candidate_id == 4);
  CHECK_FALSE(verified.inloop_speedup);
  CHECK_FALSE(agent::select_best({history[1]}, compile).best);
  db::trajectory_record t;
  t.inloop_speedup = 3.0;
  t.remeasured_speedup = 2.4;
  CHECK(*t.inflation() == Approx(1.25));
}

TEST_CASE(
    "verify text names both verdicts, the failing classes and the first mismatch, compile text the errors") {
  db::evaluation_record r = evaluation("correct", "fail", 0, 0);
  r.strict_failed = "nan,extreme";
  r.cases.push_back({.case_class = "nan",
                     .status = kj::case_status::fail,
                     .first_index = 17,
                     .message = "3 values outside tolerance ... at flat index 17 (expected nan, got 8.0)"});
  r.cases.push_back({.case_class = "random", .status = kj::case_status::pass});
  r.findings.push_back({"torch_fallback", 12, "torch.matmul(a, b)"});
  const std::string text = agent::verify_text(r, "3f2a9c1e");
  INFO(text);
  CHECK(text.starts_with("verify 3f2a9c1e: compatible correct, strict fail (nan,extreme)\n"));
  CHECK(text.find("nan #0: 3 values outside tolerance") != std::string::npos);
  CHECK(text.find("(expected nan, got 8.0)") != std::string::npos);
  CHECK(text.find("passed or uninformative: random") != std::string::npos);
  CHECK(text.find("finding (not a verdict): torch_fallback at line 12") != std::string::npos);
  exec::build_record b{
      .key = "k",
      .end = exec::build_end::failed,
      .failure = kj::verdict::compile_error,
      .log = "Traceback:\n    raise CalledProcessError(1)\nx.cpp:3:1: error: expected ';'\nmore\n"};
  const std::string compiled = agent::compile_text(b, "3f2a9c1e");
  INFO(compiled);
  // The compiler's diagnostic first, before the traceback's lines that also name an error.
  CHECK(compiled.starts_with("compile 3f2a9c1e: compile_error\nx.cpp:3:1: error: expected ';'\n"));
  CHECK(compiled.find("raise CalledProcessError") != std::string::npos); // the whole log follows
  CHECK(agent::compile_text(std::nullopt, "3f2a9c1e").find("nothing to compile") != std::string::npos);
}

TEST_CASE("selection and the profile text never credit a time kj does not trust") {
  std::vector<agent::judged> history;
  history.push_back({"profile", 3, "h1", "s1", 1, 11, evaluation("correct", "pass", 2.0, 4.0)});
  history.push_back({"profile", 5, "h2", "s2", 2, 12, evaluation("correct", "pass", 0.1, 4.0)});
  history[1].record.timings[0].params_json =
      R"({"headline":"median","trusted":false,"untrusted_reason":"below the physical floor"})";
  CHECK_FALSE(agent::speedup(history[1].record, {}));
  const auto best = agent::select_best(history, {});
  REQUIRE(best.best);
  CHECK(best.best->candidate_id == 1); // the trusted 2x, not the untrusted 40x
  CHECK(*best.inloop_speedup == Approx(2.0));
  agent::profile_facts f;
  f.record = &history[1].record;
  f.hash = "3f2a9c1e";
  f.device = "cpu";
  const std::string text = agent::profile_text(f);
  INFO(text);
  CHECK(text.starts_with("profile 3f2a9c1e: 0.1 ms, a time kj does not trust, so no speedup (below the "
                         "physical floor)"));
  CHECK(text.find("x vs eager") == std::string::npos);
  CHECK(text.find("you are") == std::string::npos); // no "you are 40x faster" in its time table either
}
