// Implements export_outputs and snapshot_outputs: an output's structure, its tensors read by tensor_view, and
// their bytes copied (whole or in sampled chunks) into the judge's arena.
#include "engine/worker/output_export.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace py = pybind11;
using nlohmann::json;

namespace kj::worker {
namespace {

constexpr std::uint64_t k_align = 256;

std::uint64_t aligned(std::uint64_t n) {
  return (n + k_align - 1) / k_align * k_align;
}

struct piece {
  json meta;
  tensor_view view;
};

// The result's structure and its elements (a tensor, or the items of an exact tuple or list, 64 at most); no
// elements for anything else ("other").
json structure_of(const trusted_handles& trusted, py::handle result, std::vector<py::handle>& items) {
  PyTypeObject* type = Py_TYPE(result.ptr());
  if (type != reinterpret_cast<PyTypeObject*>(trusted.tensor_type.ptr()) && type != &PyTuple_Type &&
      type != &PyList_Type)
    return {{"structure", "other"}, {"type", type->tp_name}, {"outputs", json::array()}};
  if (type == &PyTuple_Type || type == &PyList_Type) {
    const bool tuple = type == &PyTuple_Type;
    const Py_ssize_t n = tuple ? PyTuple_GET_SIZE(result.ptr()) : PyList_GET_SIZE(result.ptr());
    for (Py_ssize_t i = 0; i < n && i < 64; ++i)
      items.emplace_back(tuple ? PyTuple_GET_ITEM(result.ptr(), i) : PyList_GET_ITEM(result.ptr(), i));
    return {{"structure", tuple ? "tuple" : "list"}, {"outputs", json::array()}};
  }
  items.push_back(result);
  return {{"structure", "tensor"}, {"outputs", json::array()}};
}

std::vector<piece> pieces_of(const trusted_handles& trusted, const std::vector<py::handle>& items,
                             bool cuda) {
  std::vector<piece> pieces;
  for (py::handle item : items) {
    piece p{{}, read_tensor(trusted, item)};
    const tensor_view& v = p.view;
    if (v.tensor && v.cuda != cuda) // the judge compares on its own device only
      p.view = tensor_view{false, std::string("torch.Tensor on ") + (v.cuda ? "cuda" : "cpu")};
    if (!p.view.tensor) {
      p.meta = {{"tensor", false}, {"type", p.view.type}};
    } else {
      p.meta = {{"tensor", true},       {"type", v.type},
                {"dtype", v.dtype},     {"shape", v.shape},
                {"strides", v.strides}, {"device", v.cuda ? "cuda" : "cpu"},
                {"nbytes", v.nbytes()}, {"span_bytes", v.span_bytes()}};
    }
    pieces.push_back(std::move(p));
  }
  return pieces;
}

void copy_bytes(const cuda::plugin* plugin, bool cuda, std::uint64_t dst, std::uint64_t src,
                std::uint64_t n) {
  if (n == 0) return;
  if (cuda) {
    if (plugin == nullptr) throw std::runtime_error("a CUDA arena without the CUDA plugin");
    plugin->copy_sync(dst, src, n);
  } else {
    std::memcpy(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  }
}

// `count` distinct chunk indices of [0, total), ascending, from a fresh seed.
std::vector<std::uint64_t> random_chunks(std::uint64_t total, std::uint64_t count) {
  std::random_device device;
  std::mt19937_64 rng((static_cast<std::uint64_t>(device()) << 32) ^ device());
  std::vector<std::uint64_t> picked;
  if (count * 2 >= total) { // most of them: shuffle all, keep `count`
    picked.resize(total);
    for (std::uint64_t i = 0; i < total; ++i)
      picked[i] = i;
    std::shuffle(picked.begin(), picked.end(), rng);
    picked.resize(count);
  } else {
    std::vector<bool> taken(total);
    while (picked.size() < count) {
      const std::uint64_t i = rng() % total;
      if (!taken[i]) picked.push_back(i), taken[i] = true;
    }
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

} // namespace

json export_outputs(const trusted_handles& trusted, py::handle result, const arena_view& arena,
                    const cuda::plugin* plugin) {
  const gc_off no_gc; // reading allocates Python objects: no collection (no candidate code) until copied
  std::vector<py::handle> items;
  json reply = structure_of(trusted, result, items);
  if (reply["structure"] == "other") return reply;
  std::vector<piece> pieces = pieces_of(trusted, items, arena.cuda);
  std::uint64_t needed = 0;
  for (auto& p : pieces) {
    if (!p.view.tensor) continue;
    p.meta["offset"] = needed;
    needed += aligned(p.view.span_bytes());
  }
  if (needed > arena.bytes) {
    reply["need_bytes"] = needed;
    return reply;
  }
  for (auto& p : pieces) {
    if (p.view.tensor)
      copy_bytes(plugin, arena.cuda, arena.ptr + p.meta["offset"].get<std::uint64_t>(), p.view.data,
                 p.view.span_bytes());
    reply["outputs"].push_back(std::move(p.meta));
  }
  return reply;
}

json snapshot_outputs(const trusted_handles& trusted, py::handle result, const arena_view& slot,
                      std::uint64_t slot_offset, const cuda::plugin* plugin) {
  const gc_off no_gc; // reading allocates Python objects: no collection (no candidate code) until copied
  std::vector<py::handle> items;
  json reply = structure_of(trusted, result, items);
  if (reply["structure"] == "other") return reply;
  std::vector<piece> pieces = pieces_of(trusted, items, slot.cuda);
  std::uint64_t whole = 0, tensors = 0;
  for (const auto& p : pieces)
    if (p.view.tensor) whole += aligned(p.view.span_bytes()), ++tensors;
  // Each tensor's share of the slot when they do not all fit: whole chunks.
  const std::uint64_t share = tensors ? slot.bytes / tensors / k_snapshot_chunk * k_snapshot_chunk : 0;
  std::uint64_t at = 0;
  for (auto& p : pieces) {
    const tensor_view& v = p.view;
    if (v.tensor && (whole <= slot.bytes || v.span_bytes() <= share)) {
      p.meta["offset"] = slot_offset + at;
      copy_bytes(plugin, slot.cuda, slot.ptr + at, v.data, v.span_bytes());
      at += aligned(v.span_bytes());
    } else if (v.tensor && !v.dense) {
      p.meta = {{"tensor", false},
                {"type", "torch.Tensor (not dense storage: its elements span " +
                             std::to_string(v.span_bytes()) + " bytes for " + std::to_string(v.nbytes()) +
                             ")"}};
    } else if (v.tensor) {
      const std::uint64_t total = (v.span_bytes() + k_snapshot_chunk - 1) / k_snapshot_chunk;
      const std::vector<std::uint64_t> chunks =
          random_chunks(total, std::min(total, share / k_snapshot_chunk));
      p.meta["offset"] = slot_offset + at;
      p.meta["chunk_bytes"] = k_snapshot_chunk;
      p.meta["chunks"] = chunks;
      for (std::uint64_t c : chunks) {
        const std::uint64_t begin = c * k_snapshot_chunk;
        const std::uint64_t n = std::min(k_snapshot_chunk, v.span_bytes() - begin);
        copy_bytes(plugin, slot.cuda, slot.ptr + at, v.data + begin, n);
        at += n;
      }
      at = aligned(at);
    }
    reply["outputs"].push_back(std::move(p.meta));
  }
  return reply;
}

} // namespace kj::worker
