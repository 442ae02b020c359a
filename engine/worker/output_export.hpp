// The runner's side of the arena: a forward's result copied into the judge's memory as raw bytes, read from
// C++ through handles captured before the candidate was imported (tensor_view.hpp: no torch method, mode,
// dispatcher entry or Python of the candidate's runs while kj reads or copies an output).
#pragma once

#include "cuda/plugin_loader.hpp"
#include "engine/worker/tensor_view.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>

namespace kj::worker {

// The arena as this process sees it (mapped from the judge's file, or opened through CUDA IPC), or a slot of
// it.
struct arena_view {
  std::uint64_t ptr = 0;
  std::uint64_t bytes = 0;
  bool cuda = false;
};

// The reply fields for `result`: "structure" (tensor, tuple, list, other), "outputs" (per element: tensor,
// type, dtype, shape, strides, nbytes, span_bytes, offset), "type" for other; or "need_bytes" when the arena
// is too small (nothing copied). Each tensor's memory from its first to its last element is copied as it lies
// (the judge lays it out again by its strides). A tensor counts only as tensor_view reads it, and only on the
// arena's device.
nlohmann::json export_outputs(const trusted_handles& trusted, pybind11::handle result,
                              const arena_view& arena, const cuda::plugin* plugin);

// A timed call's outputs, taken into `slot` (of the arena, at `slot_offset` in it) right after the call
// returned: whole when they fit the slot; otherwise each tensor's memory is sampled in random 64 KiB chunks
// (chosen now, after the call: the candidate cannot know them in advance), and then a tensor must be dense.
// Outputs are described as export_outputs does, offsets in the arena; a sampled tensor adds "chunks"
// (indices) and "chunk_bytes".
nlohmann::json snapshot_outputs(const trusted_handles& trusted, pybind11::handle result,
                                const arena_view& slot, std::uint64_t slot_offset,
                                const cuda::plugin* plugin);

inline constexpr std::uint64_t k_snapshot_chunk = 64 << 10; // [bytes] of one sampled chunk

} // namespace kj::worker
