// The runner's side of the arena: a forward's result copied into the judge's memory as raw bytes, read
// through DLPack from C++ with functions captured before the candidate was imported (nothing Python can
// patch).
#pragma once

#include "harness/cuda/plugin_loader.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <pybind11/embed.h>

namespace kj::worker {

// The arena as this process sees it (mapped from the judge's file, or opened through CUDA IPC).
struct arena_view {
  std::uint64_t ptr = 0;
  std::uint64_t bytes = 0;
  bool cuda = false;
};

// Taken before the candidate runs: C functions and types, which later monkeypatching cannot replace.
struct [[gnu::visibility("hidden")]] trusted_handles { // hidden, as pybind11's types are
  pybind11::object to_dlpack;                          // torch._C._to_dlpack
  pybind11::object contiguous;                         // torch._C.TensorBase.contiguous
  pybind11::object tensor_type;
};
trusted_handles capture_trusted();

// The reply fields for `result`: "structure" (tensor, tuple, list, other), "outputs" (per element: tensor,
// type, dtype, shape, offset, nbytes), "type" for other; or "need_bytes" when the arena is too small (nothing
// copied). A tensor counts only when its type is exactly torch.Tensor and its layout strided, and when it is
// on the arena's device; `parked`: a timed call's output that the runner moved to the host may fill a device
// arena.
nlohmann::json export_outputs(const trusted_handles& trusted, pybind11::handle result,
                              const arena_view& arena, const cuda::plugin* plugin, bool parked = false);

} // namespace kj::worker
