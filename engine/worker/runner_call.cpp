// Implements the runner's one entry into the candidate's forward.
#include "engine/worker/runner_call.hpp"

#include "engine/worker/tensor_view.hpp"

namespace py = pybind11;

namespace kj::worker {

py::object call_forward(const py::object& session, const py::object& model, const py::object& inputs) {
  try {
    const gc_off off;
    return model(*inputs);
  } catch (py::error_already_set& e) {
    // The traceback travels with the exception object (pybind11 keeps it apart): the candidate's error text
    // names its file and line.
    if (e.trace() && !e.trace().is_none()) PyException_SetTraceback(e.value().ptr(), e.trace().ptr());
    py::object error = session.attr("forward_error")(e.value());
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
    throw py::error_already_set();
  }
}

} // namespace kj::worker
