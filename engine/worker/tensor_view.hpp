// What the runner reads of a candidate's output tensor without running anything the candidate can reach: no
// torch method, no torch function or dispatch mode, no dispatcher entry, no Python of the candidate's.
#pragma once

#include <cstdint>
#include <pybind11/embed.h>
#include <string>
#include <vector>

namespace kj::worker {

// Taken before the candidate is imported: C functions, C types and descriptors of torch._C.TensorBase (a C
// type, which monkeypatching cannot change), so that later patches of torch.Tensor or torch.* never reach
// them.
struct [[gnu::visibility("hidden")]] trusted_handles { // hidden, as pybind11's types are
  pybind11::object tensor_type;                        // torch.Tensor: an output must be exactly this type
  pybind11::object disable_torch_function; // torch._C.DisableTorchFunction: modes and subclasses off
  // torch._C's mode stacks: _len/_pop/_push_on_ torch_function_stack and torch_dispatch_stack
  pybind11::object function_modes, pop_function_mode, push_function_mode;
  pybind11::object disable_torch_dispatch;    // torch._C._DisableTorchDispatch: the Python dispatch key off
  pybind11::object dispatch_keys;             // torch._C._dispatch_keys
  std::vector<pybind11::object> refused_keys; // Python, PythonTLSSnapshot, Functionalize
  pybind11::object data_ptr, stride, is_neg, is_conj, untyped_storage; // TensorBase methods
  pybind11::object shape, dtype, layout, device;                       // TensorBase getters (bound __get__)
  pybind11::object storage_data_ptr, storage_nbytes;                   // torch._C.StorageBase methods
  pybind11::object strided;                                            // torch.strided
  struct dtype_entry {
    pybind11::object dtype;
    std::string name;
    std::uint64_t itemsize = 0;
  };
  std::vector<dtype_entry> dtypes;
};
trusted_handles capture_trusted();

// While it lives, Python's cyclic collector is off (the C API: the gc module's functions may be the
// candidate's), so that no collection runs the candidate's gc.callbacks or finalizers while kj reads, copies
// or draws; it is back on afterwards only if it was on before.
class gc_off {
public:
  gc_off() : m_was_on(PyGC_Disable() != 0) {}
  ~gc_off() {
    if (m_was_on) PyGC_Enable();
  }
  gc_off(const gc_off&) = delete;
  gc_off& operator=(const gc_off&) = delete;

private:
  bool m_was_on;
};

// While it lives, the torch function modes the candidate left entered are off the stack (put back, in order,
// when it goes: popping and pushing a function mode runs none of its Python) and the Python dispatch key is
// off (torch's C guard: pushing a dispatch mode back would read its `_mode_key`, the candidate's Python).
// kj's own work between timed calls (drawing the next inputs) runs none of the candidate's modes, while kj's
// own `torch.device` context, a function mode, still draws on the device inside it. Python's collector is off
// too (the C API: a collection runs the candidate's gc.callbacks).
class [[gnu::visibility("hidden")]] candidate_modes_off {
public:
  explicit candidate_modes_off(const trusted_handles& trusted);
  ~candidate_modes_off();
  candidate_modes_off(const candidate_modes_off&) = delete;
  candidate_modes_off& operator=(const candidate_modes_off&) = delete;

private:
  const gc_off m_no_gc;
  const trusted_handles& m_trusted;
  std::vector<pybind11::object> m_function; // top first
  pybind11::object m_dispatch;
};

// One output as its raw memory: the elements span [data, data + span_bytes()) of device memory (cuda) or host
// memory, laid out by `strides` (in elements, never negative in torch).
struct tensor_view {
  bool tensor = false; // a strided CPU/CUDA tensor of a known dtype, exactly torch.Tensor, inside its storage
  std::string type;    // what it is ("torch.Tensor", or why kj cannot read it as one)
  std::string dtype;
  std::uint64_t itemsize = 0;
  std::vector<std::int64_t> shape, strides;
  bool cuda = false;
  std::uint64_t data = 0;  // the address of its first element
  std::uint64_t numel = 0; // elements
  std::uint64_t span = 0;  // elements from the first to the last one in memory, both included
  bool dense = false;      // no two elements share memory and none lies between them (any order of dims)
  std::uint64_t nbytes() const { return numel * itemsize; }
  std::uint64_t span_bytes() const { return span * itemsize; }
};

// Reads `item` through the trusted handles, with torch function handling disabled while it does; a Python
// subclass, a tensor with a Python dispatch key, a lazy negation/conjugation bit, another layout or device,
// an unknown dtype and elements outside the storage each make it not a tensor, with `type` saying why.
tensor_view read_tensor(const trusted_handles& trusted, pybind11::handle item);

} // namespace kj::worker
