// The worker's baseline modes: the problem's own Model, eager or compiled, timed like a candidate
// ("baseline"), or only compiled to warm the Inductor cache ("baseline_compile").
#include "engine/worker/baseline.hpp"

#include "engine/exec/timing_methods.hpp"
#include "engine/worker/judge_evaluation.hpp"
#include "engine/worker/support.hpp"

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

// Begins the timing inputs as candidates get them (robust: fresh inputs drawn on the device for every call;
// the other methods: KernelBench's one CPU-drawn set). Running out of memory names the bytes.
bool draw_inputs(const exec::baseline_job& job, py::object& session, bool compile_only) {
  const bool fresh = exec::timing_method_named(job.timing.method).fresh_inputs && !compile_only;
  py::module_::import("kj_baseline").attr("draw_inputs")(session, job.protocol.seed, fresh);
  return fresh;
}

// One mode on the session's inputs: build (compile), check against eager, time; ends with a "baseline"
// event carrying the mode's status. A failure of one mode does not stop the next.
void run_mode(const exec::baseline_job& job, py::module_& runtime, py::object& session, std::size_t problem,
              const std::string& mode, bool fresh, result_channel& channel) {
  const bool compile_only = job.compile_only;
  json done{{"type", "baseline"}, {"problem", problem}, {"mode", mode}, {"status", "ok"}, {"error", ""}};
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
        py::object prepare_call = session.attr("prepare_call");
        const std::function<void()> call = [&] { call_baseline(); };
        const std::function<void()> prepare = [&] { prepare_call(); };
        timing =
            time_callable(call, session_device(job.device, session), job.timing, fresh ? prepare : nullptr);
      }
      timing.params["fresh_inputs"] = fresh;
      timing.params["compile_s"] = compile_s;
      report_timing(channel, mode, timing, {{"problem", problem}});
    }
  } catch (py::error_already_set& e) {
    done["status"] = verdict_of(runtime, e);
    done["error"] = python_error_text(runtime, e);
  }
  baselines.attr("release")(); // the next mode starts from a reset dynamo and returned memory
  channel.emit(done);
}

} // namespace

void run_baseline(const exec::baseline_job& job, py::module_& runtime, result_channel& channel) {
  const auto& items = job.items;
  py::object flags = runtime.attr("backend_flags")(); // each problem starts from the worker's own flags
  for (std::size_t k = 0; k < items.size(); ++k) {
    std::string phase = "load_problem";
    try {
      runtime.attr("set_backend_flags")(flags);
      py::object session =
          py::module_::import("kj_judge")
              .attr("Session")(py_device(job.device),
                               py::module_::import("json").attr("loads")(json(job.protocol).dump()));
      py::object applied =
          session.attr("load_problem")(items[k].problem.path, items[k].problem.source, job.overrides);
      channel.emit(
          {{"type", "phase"}, {"phase", "inputs"}, {"problem", k}, {"applied_overrides", to_json(applied)}});
      phase = "inputs";
      const bool fresh = draw_inputs(job, session, job.compile_only);
      phase = "modes";
      for (const std::string& mode : items[k].modes)
        run_mode(job, runtime, session, k, mode, fresh, channel);
    } catch (py::error_already_set& e) { // what stops every mode of this problem: loading it, its inputs
      channel.emit({{"type", "problem_failed"},
                    {"problem", k},
                    {"status", verdict_of(runtime, e)},
                    {"phase", phase},
                    {"error", python_error_text(runtime, e)}});
    }
    py::module_::import("kj_baseline").attr("release")();
  }
  channel.emit({{"type", "verdict"}, {"verdict", "ok"}, {"error", ""}});
}

} // namespace kj::worker
