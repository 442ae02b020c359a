// Starts the embedded interpreter on the Python that has torch (a venv's too), chosen at build or run time.
#pragma once

#include <memory>
#include <pybind11/embed.h>
#include <string>

namespace kj::worker {

// The python3 executable whose environment is embedded: $KJ_PYTHON if set, else the one found at build time.
std::string python_executable();

// Starts the interpreter with sys.prefix and site-packages of python_executable() (pyvenv.cfg is honoured).
std::unique_ptr<pybind11::scoped_interpreter> start_interpreter();

// Imports the runtime module carried inside the binary (harness/worker/kj_runtime.py).
pybind11::module_ import_runtime();

} // namespace kj::worker
