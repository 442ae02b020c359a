// The one way the runner calls the candidate's forward, for checked calls (trials, strict cases) and timed
// ones alike: from C++, with no frame of kj's Python on the stack and the collector off, so that nothing a
// forward can see from inside tells a timed call from a checked one.
#pragma once

#include <pybind11/embed.h>

namespace kj::worker {

// model(*inputs), the collector off (gc_off). A Python exception propagates as the KjError
// `session.forward_error` makes of it.
pybind11::object call_forward(const pybind11::object& session, const pybind11::object& model,
                              const pybind11::object& inputs);

} // namespace kj::worker
