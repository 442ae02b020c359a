// Micro-benchmarks of the judge's hot paths, in the embedded Python the worker runs (kj_bench
// --benchmark_filter= judge): KernelBench's comparison and the strict comparison per GiB of output, and an
// adversarial input draw per GiB, on the CPU and, where torch sees one, on the GPU. Bytes processed per
// second are what to read.
#include "engine/worker/python_env.hpp"

#include <benchmark/benchmark.h>
#include <cstdint>
#include <memory>
#include <pybind11/embed.h>
#include <string>

namespace py = pybind11;

namespace {

// One interpreter for the whole benchmark binary, with the worker's judge modules imported.
py::module_& judge_modules() {
  static std::unique_ptr<py::scoped_interpreter> interpreter = kj::worker::start_interpreter();
  static py::module_ common = kj::worker::import_modules(kj::worker::python_role::judge);
  return common;
}

bool has_device(const std::string& device) {
  return device == "cpu" || py::module_::import("torch").attr("cuda").attr("is_available")().cast<bool>();
}

// The benchmark's tensors: a reference of `bytes` fp32 values and an output that differs in its last bits.
py::tuple pair_of(const std::string& device, std::int64_t bytes) {
  py::module_ torch = py::module_::import("torch");
  py::object ref = torch.attr("rand")(bytes / 4, py::arg("device") = device);
  py::object out = ref.attr("mul")(1.0000001);
  return py::make_tuple(ref, out);
}

void sync(const std::string& device) {
  if (device != "cpu") py::module_::import("torch").attr("cuda").attr("synchronize")();
}

void judge_compare(benchmark::State& state, const std::string& device, const char* which) {
  judge_modules();
  if (!has_device(device)) return state.SkipWithError("no CUDA device in this torch");
  const std::int64_t bytes = state.range(0);
  py::tuple tensors = pair_of(device, bytes);
  py::object compare = py::module_::import("kj_compare").attr("compare");
  py::object strict = py::module_::import("kj_tolerance").attr("judge");
  for (auto _ : state) {
    if (std::string(which) == "kernelbench")
      benchmark::DoNotOptimize(compare(tensors[0], tensors[1], 1e-4, 1e-4).ptr());
    else
      benchmark::DoNotOptimize(strict(tensors[1], tensors[0], 1e-4, 1e-5, 8.0).ptr());
    sync(device);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

void judge_draw(benchmark::State& state, const std::string& device) {
  judge_modules();
  if (!has_device(device)) return state.SkipWithError("no CUDA device in this torch");
  const std::int64_t bytes = state.range(0);
  py::module_ torch = py::module_::import("torch");
  py::object adversarial = py::module_::import("kj_recipes").attr("adversarial");
  py::object x = torch.attr("empty")(bytes / 4, py::arg("device") = device);
  py::object generator = torch.attr("Generator")(py::arg("device") = device);
  for (auto _ : state) {
    generator.attr("manual_seed")(1);
    benchmark::DoNotOptimize(adversarial(py::make_tuple(x), "denormal", generator).ptr());
    sync(device);
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

constexpr std::int64_t k_mib = 1 << 20;

} // namespace

BENCHMARK_CAPTURE(judge_compare, kernelbench_cpu, std::string("cpu"), "kernelbench")->Arg(256 * k_mib);
BENCHMARK_CAPTURE(judge_compare, strict_cpu, std::string("cpu"), "strict")->Arg(256 * k_mib);
BENCHMARK_CAPTURE(judge_draw, denormal_cpu, std::string("cpu"))->Arg(256 * k_mib);
BENCHMARK_CAPTURE(judge_compare, kernelbench_cuda, std::string("cuda"), "kernelbench")->Arg(1024 * k_mib);
BENCHMARK_CAPTURE(judge_compare, strict_cuda, std::string("cuda"), "strict")->Arg(1024 * k_mib);
BENCHMARK_CAPTURE(judge_draw, denormal_cuda, std::string("cuda"))->Arg(1024 * k_mib);
