// The throughput of the real `kj` (kj_bench --benchmark_filter=suite): `kj run --device cpu` with identity
// candidates on level 1 of the built-in suite, without timing (the judge's start, load, trials and strict
// classes are what is measured), with warm judges, with short evaluations and with --fresh-judges. Seconds
// per candidate (the counter `s_per_candidate`) are what to read; on the GPU machine `scripts/gpu-check.sh
// speed` measures KernelBench's own.
#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

namespace {

// Runs `command`, returns its standard output.
std::string output_of(const std::string& command) {
  std::string out;
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, pipe))
      out += buffer;
    ::pclose(pipe);
  }
  return out;
}

void suite(benchmark::State& state, const char* mode) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("kj-bench-suite-" + std::to_string(::getpid()));
  double candidates = 0;
  for (auto _ : state) {
    fs::remove_all(folder);
    fs::create_directories(folder);
    const std::string out =
        output_of(std::string(KJ_BINARY) +
                  " run --device cpu --builtin --level 1 --candidates identity --no-timing "
                  "--progress never --db " +
                  (folder / "kj.sqlite").string() + " " + mode + " 2>/dev/null");
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(: (\d+) evaluations:)")))
      return state.SkipWithError("kj run printed no evaluation count");
    candidates = std::stod(m[1]);
  }
  fs::remove_all(folder);
  state.counters["candidates"] = candidates;
  state.counters["s_per_candidate"] =
      benchmark::Counter(candidates * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

BENCHMARK_CAPTURE(suite, warm_judges, "")->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();
// Short evaluations (compare-aa's mode, untimed here): what is left is mostly runners starting, which the
// pool hides only when the next runner starts early enough (docs/design.md, "Warm judges").
BENCHMARK_CAPTURE(suite, short_evaluations, "--no-strict --trials 1")
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(suite, fresh_judges, "--fresh-judges")
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

} // namespace
