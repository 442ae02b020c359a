// The worker's baseline modes: the problem's own Model, eager or compiled, timed like a candidate
// ("baseline"), or only compiled to warm the Inductor cache ("baseline_compile").
#include "harness/worker/baseline.hpp"

#include "harness/worker/evaluate.hpp"
#include "harness/worker/support.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// Draws the timing inputs as candidates get them (robust: several sets on the device; the other methods:
// KernelBench's one CPU-drawn set); one set is enough to compile. Running out of memory names the bytes.
int draw_inputs(const job_spec& job, py::object& session, bool compile_only) {
  const bool robust = job.timing.method == "robust";
  const int sets = compile_only || !robust ? 1 : job.timing.input_sets;
  try {
    return session.attr("prepare_timing")(job.protocol.seed, sets, robust).cast<int>();
  } catch (py::error_already_set& e) {
    if (!e.matches(py::module_::import("torch").attr("OutOfMemoryError"))) throw;
    throw py::error_already_set(
        (py::module_::import("kj_baseline").attr("inputs_oom")(session.attr("problem"), e.value()), e));
  }
}

// One mode on the session's inputs: build (compile), check against eager, time; ends with a "baseline"
// event carrying the mode's status. A failure of one mode does not stop the next.
void run_mode(const job_spec& job, py::module_& runtime, py::object& session, const std::string& mode,
              int sets, result_channel& channel) {
  const bool compile_only = job.mode == "baseline_compile";
  json done{{"type", "baseline"}, {"mode", mode}, {"status", "ok"}, {"error", ""}};
  py::module_ baselines = py::module_::import("kj_baseline");
  try {
    py::object baseline = baselines.attr("Baseline")(session, job.protocol.seed, mode);
    const double compile_s = baseline.attr("compile_s").cast<double>();
    done["compile_s"] = compile_s;
    if (!compile_only) {
      done["check"] = to_json(baseline.attr("matches_eager")(job.protocol.atol, job.protocol.rtol));
      timing_result timing;
      {
        const gc_paused no_gc;
        py::object call_baseline = baseline.attr("call");
        const std::function<void()> call = [&] { call_baseline(); };
        timing = time_callable(call, session_device(job, session), job.timing);
      }
      timing.params["input_sets"] = sets;
      timing.params["compile_s"] = compile_s;
      report_timing(channel, mode, timing);
    }
  } catch (py::error_already_set& e) {
    done["status"] = verdict_of(runtime, e);
    done["error"] = python_error_text(runtime, e);
  }
  baselines.attr("release")(session); // the next mode starts from an empty allocator and a reset dynamo
  channel.emit(done);
}

} // namespace

void run_baseline(const job_spec& job, py::module_& runtime, result_channel& channel) {
  const bool compile_only = job.mode == "baseline_compile";
  std::string phase = "load_problem";
  try {
    py::object session = runtime.attr("Session")(
        job.device, py::module_::import("json").attr("loads")(json(job.protocol).dump()));
    py::object applied = session.attr("load_problem")(job.problem.path, job.problem.source, job.overrides);
    channel.emit({{"type", "phase"}, {"phase", "inputs"}, {"applied_overrides", to_json(applied)}});
    phase = "inputs";
    const int sets = draw_inputs(job, session, compile_only);
    phase = "modes";
    for (const std::string& mode : job.baseline_modes)
      run_mode(job, runtime, session, mode, sets, channel);
    channel.emit({{"type", "verdict"}, {"verdict", "ok"}, {"error", ""}});
  } catch (py::error_already_set& e) {
    channel.emit({{"type", "verdict"},
                  {"verdict", verdict_of(runtime, e)},
                  {"phase", phase},
                  {"error", python_error_text(runtime, e)}});
  } catch (const std::exception& e) {
    channel.emit({{"type", "verdict"}, {"verdict", "harness_error"}, {"phase", phase}, {"error", e.what()}});
  }
}

} // namespace kj::worker
