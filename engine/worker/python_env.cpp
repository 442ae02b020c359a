// Implements interpreter start-up for the worker.
#include "engine/worker/python_env.hpp"

#include <cstdio>
#include <cstdlib>
#include <malloc.h>
#include <pybind11/stl.h>
#include <stdexcept>
#include <string_view>
#include <unistd.h>

namespace py = pybind11;

namespace kj::worker {

extern const std::string_view kj_paths_source;
extern const std::string_view kj_common_source;
extern const std::string_view kj_recipes_source;
extern const std::string_view kj_compare_source;
extern const std::string_view kj_memory_source;
extern const std::string_view kj_arena_source;
extern const std::string_view kj_remote_source;
extern const std::string_view kj_judge_source;
extern const std::string_view kj_tolerance_source;
extern const std::string_view kj_verify_source;
extern const std::string_view kj_audit_source;
extern const std::string_view kj_info_source;
extern const std::string_view kj_baseline_source;
extern const std::string_view kj_sources_source;
extern const std::string_view kj_runner_source;

std::string python_executable() {
  if (const char* env = std::getenv("KJ_PYTHON"); env && *env) return env;
  return KJ_PYTHON_EXECUTABLE;
}

namespace {

// The host allocator in one fixed state in every judge and runner. glibc raises its mmap threshold as large
// blocks are freed, so the same op's outputs came from freshly mapped (page-faulted) memory in one process
// and from reused heap in the other: on the CPU the reference (timed in the judge) and an identical candidate
// (in the runner) differed by up to 2.2x, in either direction, from run to run. Fixed thresholds end that
// drift: blocks below 32 MiB (glibc's largest threshold) are reused from the heap, larger ones are mapped
// afresh by every process alike, and up to 64 MiB of freed heap is kept rather than returned and faulted in
// again.
void steady_host_allocator() {
  (void)::mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)::mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

} // namespace

std::unique_ptr<py::scoped_interpreter> start_interpreter() {
  steady_host_allocator();
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  config.parse_argv = 0;
  config.install_signal_handlers = 0; // SIGINT/SIGTERM from the orchestrator must end the worker, not raise
  const std::string exe = python_executable();
  // Setting the program name makes Python compute its prefix from that executable, venvs included.
  PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, exe.c_str());
  if (PyStatus_Exception(status)) {
    PyConfig_Clear(&config);
    throw std::runtime_error("cannot configure the embedded Python for " + exe);
  }
  return std::make_unique<py::scoped_interpreter>(&config, 0, nullptr, false);
}

void exit_without_finalizing(int code) {
  try {
    for (const char* stream : {"stdout", "stderr"})
      py::module_::import("sys").attr(stream).attr("flush")();
  } catch (const std::exception&) { // a stream the code closed: nothing left to flush
  }
  std::fflush(nullptr);
  ::_exit(code);
}

namespace {

py::object import_embedded(const char* name, std::string_view source) {
  py::object module = py::module_::import("types").attr("ModuleType")(name);
  module.attr("__file__") = std::string("<") + name + ">";
  py::module_::import("sys").attr("modules")[name] = module;
  py::exec(py::str(source.data(), source.size()), module.attr("__dict__"));
  return module;
}

py::object import_paths_module() {
  py::object modules = py::module_::import("sys").attr("modules");
  if (modules.contains("kj_paths")) return modules["kj_paths"];
  return import_embedded("kj_paths", kj_paths_source);
}

} // namespace

std::vector<std::string> python_sandbox_paths() {
  return import_paths_module().attr("sandbox_paths")().cast<std::vector<std::string>>();
}

py::module_ import_modules(python_role role) {
  import_paths_module();
  py::object common = import_embedded("kj_common", kj_common_source);
  import_embedded("kj_recipes", kj_recipes_source);
  if (role == python_role::runner) {
    import_embedded("kj_runner", kj_runner_source);
  } else { // in import order: each imports only those before it
    import_embedded("kj_compare", kj_compare_source);
    import_embedded("kj_memory", kj_memory_source);
    import_embedded("kj_arena", kj_arena_source);
    import_embedded("kj_remote", kj_remote_source);
    import_embedded("kj_judge", kj_judge_source);
    import_embedded("kj_tolerance", kj_tolerance_source);
    import_embedded("kj_verify", kj_verify_source);
    import_embedded("kj_audit", kj_audit_source);
    import_embedded("kj_info", kj_info_source);
    import_embedded("kj_baseline", kj_baseline_source);
    import_embedded("kj_sources", kj_sources_source);
  }
  return common.cast<py::module_>();
}

} // namespace kj::worker
