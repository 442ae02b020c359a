// Starts the embedded interpreter on the Python that has torch (a venv's too), chosen at build or run time.
#pragma once

#include <memory>
#include <pybind11/embed.h>
#include <string>
#include <vector>

namespace kj::worker {

// The python3 executable whose environment is embedded: $KJ_PYTHON if set, else the one found at build time.
std::string python_executable();

// Starts the interpreter with sys.prefix and site-packages of python_executable() (pyvenv.cfg is honoured).
std::unique_ptr<pybind11::scoped_interpreter> start_interpreter();

// Ends the process once its results are written (unbuffered, to their fds): Python's own streams are flushed,
// the interpreter is not finalized (tearing torch down took most of an evaluation's `exit` phase).
[[noreturn]] void exit_without_finalizing(int code);

// Which of the Python modules carried inside the binary a process imports: the judge's (the reference, the
// comparisons, the verdicts) or the runner's (the candidate's side: importing and calling it). Each process
// imports only its own; both import kj_common.
enum class python_role { judge, runner };

// The folders Python and torch load from (kj_paths.py), found without importing torch: a runner can be
// started before the judge's own torch import.
std::vector<std::string> python_sandbox_paths();

// Imports the role's modules; returns kj_common (KjError, format_exception, TimingInputs, ...).
pybind11::module_ import_modules(python_role role);

} // namespace kj::worker
