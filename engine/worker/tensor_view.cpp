// Implements read_tensor: a candidate's output tensor described from TensorBase's own C descriptors, torch
// function handling off, so that no Python of the candidate's runs while kj reads it.
#include "engine/worker/tensor_view.hpp"

#include <algorithm>
#include <utility>

namespace py = pybind11;

namespace kj::worker {
namespace {

tensor_view refused(std::string why) {
  tensor_view v;
  v.type = "torch.Tensor (" + std::move(why) + ")";
  return v;
}

// Whether the dims of size > 1, taken by increasing stride, tile memory exactly (a permuted contiguous
// tensor).
bool dense_layout(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& strides) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims; // (stride, size)
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] > 1) dims.emplace_back(strides[i], shape[i]);
  std::sort(dims.begin(), dims.end());
  std::int64_t expected = 1;
  for (const auto& [stride, size] : dims) {
    if (stride != expected) return false;
    expected *= size;
  }
  return true;
}

std::vector<std::int64_t> ints(const py::handle& sequence) {
  std::vector<std::int64_t> out;
  for (py::handle v : sequence)
    out.push_back(v.cast<std::int64_t>());
  return out;
}

} // namespace

trusted_handles capture_trusted() {
  py::module_ torch = py::module_::import("torch");
  py::object c = torch.attr("_C");
  py::object base = c.attr("TensorBase");
  const auto getter = [&](const char* name) { return base.attr("__dict__")[name].attr("__get__"); };
  trusted_handles t;
  t.tensor_type = torch.attr("Tensor");
  t.disable_torch_function = c.attr("DisableTorchFunction");
  t.function_modes = c.attr("_len_torch_function_stack");
  t.pop_function_mode = c.attr("_pop_torch_function_stack");
  t.push_function_mode = c.attr("_push_on_torch_function_stack");
  t.disable_torch_dispatch = c.attr("_DisableTorchDispatch");
  t.dispatch_keys = c.attr("_dispatch_keys");
  for (const char* key : {"Python", "PythonTLSSnapshot", "Functionalize"})
    t.refused_keys.push_back(c.attr("DispatchKey").attr(key));
  t.data_ptr = base.attr("data_ptr");
  t.stride = base.attr("stride");
  t.is_neg = base.attr("is_neg");
  t.is_conj = base.attr("is_conj");
  t.untyped_storage = base.attr("untyped_storage");
  t.shape = getter("shape");
  t.dtype = getter("dtype");
  t.layout = getter("layout");
  t.device = getter("device");
  t.storage_data_ptr = c.attr("StorageBase").attr("data_ptr");
  t.storage_nbytes = c.attr("StorageBase").attr("nbytes");
  t.strided = torch.attr("strided");
  const std::pair<const char*, std::uint64_t> dtypes[] = {
      {"float32", 4}, {"float64", 8}, {"float16", 2}, {"bfloat16", 2}, {"int8", 1},      {"uint8", 1},
      {"int16", 2},   {"int32", 4},   {"int64", 8},   {"bool", 1},     {"complex64", 8}, {"complex128", 16}};
  for (const auto& [name, size] : dtypes)
    t.dtypes.push_back({torch.attr(name), name, size});
  return t;
}

candidate_modes_off::candidate_modes_off(const trusted_handles& trusted) : m_trusted(trusted) {
  for (auto n = trusted.function_modes().cast<long>(); n > 0; --n)
    m_function.push_back(trusted.pop_function_mode());
  m_dispatch = trusted.disable_torch_dispatch();
  m_dispatch.attr("__enter__")();
}

candidate_modes_off::~candidate_modes_off() {
  try {
    m_dispatch.attr("__exit__")(py::none(), py::none(), py::none());
    for (auto it = m_function.rbegin(); it != m_function.rend(); ++it)
      m_trusted.push_function_mode(*it);
  } catch (py::error_already_set&) { // the stacks were the candidate's; nothing of kj's depends on them
  }
}

namespace {

// While it lives, torch function handling (modes, subclasses' __torch_function__) is off: TensorBase's
// getters would otherwise ask them first. The guard is torch's C type.
class torch_function_off {
public:
  explicit torch_function_off(const trusted_handles& t) : m_guard(t.disable_torch_function()) {
    m_guard.attr("__enter__")();
  }
  ~torch_function_off() {
    try {
      m_guard.attr("__exit__")(py::none(), py::none(), py::none());
    } catch (py::error_already_set&) { // nothing to undo that could fail here
    }
  }
  torch_function_off(const torch_function_off&) = delete;
  torch_function_off& operator=(const torch_function_off&) = delete;

private:
  py::object m_guard;
};

} // namespace

tensor_view read_tensor(const trusted_handles& t, py::handle item) {
  if (Py_TYPE(item.ptr()) != reinterpret_cast<PyTypeObject*>(t.tensor_type.ptr())) {
    tensor_view v;
    v.type = Py_TYPE(item.ptr())->tp_name;
    return v;
  }
  const torch_function_off off(t);
  const py::object keys = t.dispatch_keys(item);
  for (const auto& key : t.refused_keys)
    if (keys.attr("has")(key).cast<bool>()) return refused("with a Python dispatch key");
  if (!t.layout(item).is(t.strided)) return refused("not dense and strided");
  const std::string device = py::str(t.device(item).attr("type"));
  if (device != "cpu" && device != "cuda") return refused("on " + device);
  if (t.is_neg(item).cast<bool>() || t.is_conj(item).cast<bool>())
    return refused("with a lazy negation or conjugation bit");
  const py::object dtype = t.dtype(item);
  const auto entry =
      std::find_if(t.dtypes.begin(), t.dtypes.end(), [&](const auto& e) { return e.dtype.is(dtype); });
  if (entry == t.dtypes.end()) return refused("of dtype " + std::string(py::str(dtype)));
  tensor_view v;
  v.tensor = true;
  v.type = "torch.Tensor";
  v.dtype = entry->name;
  v.itemsize = entry->itemsize;
  v.cuda = device == "cuda";
  v.shape = ints(t.shape(item));
  v.strides = ints(t.stride(item));
  v.numel = 1;
  for (std::int64_t d : v.shape)
    v.numel *= static_cast<std::uint64_t>(d);
  if (v.numel == 0) return v; // nothing to read: no span, no storage needed
  v.span = 1;
  for (std::size_t i = 0; i < v.shape.size(); ++i) {
    if (v.strides[i] < 0) return refused("with a negative stride");
    v.span += static_cast<std::uint64_t>(v.shape[i] - 1) * static_cast<std::uint64_t>(v.strides[i]);
  }
  v.dense = v.span == v.numel && dense_layout(v.shape, v.strides);
  v.data = t.data_ptr(item).cast<std::uint64_t>();
  const py::object storage = t.untyped_storage(item);
  const auto begin = t.storage_data_ptr(storage).cast<std::uint64_t>();
  const auto bytes = t.storage_nbytes(storage).cast<std::uint64_t>();
  if (v.data < begin || v.data + v.span_bytes() > begin + bytes)
    return refused("whose elements lie outside its storage");
  return v;
}

} // namespace kj::worker
