// Implements export_outputs: structure, DLPack metadata, and the copy into the arena.
#include "harness/worker/output_export.hpp"

#include "harness/worker/kj_dlpack.h"

#include <cstring>
#include <fmt/core.h>
#include <vector>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

constexpr std::uint64_t k_align = 256;

std::string dtype_name(const DLDataType& t) {
  if (t.lanes != 1) return fmt::format("lanes{}", t.lanes);
  switch (t.code) {
  case kDLFloat:
    return t.bits == 32 ? "float32" : t.bits == 64 ? "float64" : t.bits == 16 ? "float16" : "float?";
  case kDLBfloat:
    return t.bits == 16 ? "bfloat16" : "bfloat?";
  case kDLInt:
    return fmt::format("int{}", t.bits);
  case kDLUInt:
    return t.bits == 8 ? "uint8" : fmt::format("uint{}", t.bits);
  case kDLBool:
    return "bool";
  case kDLComplex:
    return fmt::format("complex{}", t.bits);
  default:
    return fmt::format("code{}x{}", static_cast<int>(t.code), t.bits);
  }
}

struct piece {
  json meta;
  const unsigned char* data = nullptr;
  std::uint64_t nbytes = 0;
  py::object keep; // the tensor (or its contiguous copy) and capsule stay alive until copied
  py::object capsule;
};

piece describe(const trusted_handles& trusted, py::handle item) {
  piece p;
  if (Py_TYPE(item.ptr()) != reinterpret_cast<PyTypeObject*>(trusted.tensor_type.ptr())) {
    p.meta = {{"tensor", false}, {"type", Py_TYPE(item.ptr())->tp_name}};
    return p;
  }
  try {
    p.keep = trusted.contiguous(item);
    p.capsule = trusted.to_dlpack(p.keep);
  } catch (py::error_already_set&) { // sparse, meta, quantized: not a dense strided tensor
    p.meta = {{"tensor", false}, {"type", "torch.Tensor (not dense and strided)"}};
    return p;
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(p.capsule.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  const DLTensor& t = managed->dl_tensor;
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  std::uint64_t numel = 1;
  for (auto d : shape)
    numel *= static_cast<std::uint64_t>(d);
  p.nbytes = numel * ((t.dtype.bits * t.dtype.lanes + 7) / 8);
  p.data = static_cast<const unsigned char*>(t.data) + t.byte_offset;
  p.meta = {{"tensor", true},
            {"type", "torch.Tensor"},
            {"dtype", dtype_name(t.dtype)},
            {"shape", shape},
            {"device", t.device.device_type == kDLCPU ? "cpu" : "cuda"},
            {"nbytes", p.nbytes}};
  return p;
}

} // namespace

trusted_handles capture_trusted() {
  py::module_ torch = py::module_::import("torch");
  py::object c = torch.attr("_C");
  return {c.attr("_to_dlpack"), c.attr("TensorBase").attr("contiguous"), torch.attr("Tensor")};
}

json export_outputs(const trusted_handles& trusted, py::handle result, const arena_view& arena,
                    const cuda::plugin* plugin, bool parked) {
  json reply{{"outputs", json::array()}};
  std::vector<piece> pieces;
  PyTypeObject* type = Py_TYPE(result.ptr());
  if (type == reinterpret_cast<PyTypeObject*>(trusted.tensor_type.ptr())) {
    reply["structure"] = "tensor";
    pieces.push_back(describe(trusted, result));
  } else if (type == &PyTuple_Type || type == &PyList_Type) {
    reply["structure"] = type == &PyTuple_Type ? "tuple" : "list";
    const Py_ssize_t n =
        type == &PyTuple_Type ? PyTuple_GET_SIZE(result.ptr()) : PyList_GET_SIZE(result.ptr());
    for (Py_ssize_t i = 0; i < n && i < 64; ++i)
      pieces.push_back(describe(trusted, type == &PyTuple_Type ? PyTuple_GET_ITEM(result.ptr(), i)
                                                               : PyList_GET_ITEM(result.ptr(), i)));
  } else {
    reply["structure"] = "other";
    reply["type"] = type->tp_name;
    return reply;
  }
  std::uint64_t needed = 0;
  for (auto& p : pieces) {
    if (!p.meta.value("tensor", false)) continue;
    const bool on_arena_device = (p.meta["device"] == "cuda") == arena.cuda || (parked && arena.cuda);
    if (!on_arena_device) { // the judge compares on its own device only
      p.meta = {{"tensor", false}, {"type", "torch.Tensor on " + p.meta["device"].get<std::string>()}};
      continue;
    }
    p.meta["offset"] = needed;
    needed += (p.nbytes + k_align - 1) / k_align * k_align;
  }
  if (needed > arena.bytes) {
    reply["need_bytes"] = needed;
    return reply;
  }
  for (auto& p : pieces) {
    if (p.meta.value("tensor", false) && p.nbytes > 0) {
      auto* dst = reinterpret_cast<unsigned char*>(arena.ptr) + p.meta["offset"].get<std::uint64_t>();
      if (arena.cuda) {
        if (plugin == nullptr) throw std::runtime_error("a CUDA arena without the CUDA plugin");
        plugin->copy_sync(reinterpret_cast<std::uint64_t>(dst), reinterpret_cast<std::uint64_t>(p.data),
                          p.nbytes);
      } else {
        std::memcpy(dst, p.data, p.nbytes);
      }
    }
    reply["outputs"].push_back(p.meta);
  }
  return reply;
}

} // namespace kj::worker
