// Implements the IPC arena functions on the driver API, in the primary context torch uses.
#include "cuda/ipc.hpp"

#include "cuda/driver.hpp"

#include <cstring>
#include <stdexcept>

namespace kj::cuda {

std::uint64_t mem_alloc(int device, std::uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("mem_alloc: zero bytes");
  bind_context(device);
  CUdeviceptr ptr = 0;
  KJ_CU(cuMemAlloc, &ptr, bytes);
  return static_cast<std::uint64_t>(ptr);
}

void mem_info(int device, std::uint64_t& free_bytes, std::uint64_t& total_bytes) {
  bind_context(device);
  std::size_t free = 0, total = 0;
  KJ_CU(cuMemGetInfo, &free, &total);
  free_bytes = free;
  total_bytes = total;
}

void mem_free(std::uint64_t ptr) {
  bind_context(-1);
  KJ_CU(cuMemFree, static_cast<CUdeviceptr>(ptr));
}

std::array<unsigned char, 64> ipc_handle(std::uint64_t ptr) {
  bind_context(-1);
  CUipcMemHandle handle{};
  KJ_CU(cuIpcGetMemHandle, &handle, static_cast<CUdeviceptr>(ptr));
  std::array<unsigned char, 64> out{};
  static_assert(sizeof handle.reserved == 64);
  std::memcpy(out.data(), handle.reserved, out.size());
  return out;
}

std::uint64_t ipc_open(int device, const std::array<unsigned char, 64>& bytes) {
  bind_context(device);
  CUipcMemHandle handle{};
  std::memcpy(handle.reserved, bytes.data(), bytes.size());
  CUdeviceptr ptr = 0;
  KJ_CU(cuIpcOpenMemHandle, &ptr, handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  return static_cast<std::uint64_t>(ptr);
}

void ipc_close(std::uint64_t ptr) {
  bind_context(-1);
  KJ_CU(cuIpcCloseMemHandle, static_cast<CUdeviceptr>(ptr));
}

void copy_and_sync(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
  bind_context(-1);
  KJ_CU(cuCtxSynchronize); // the producer's kernels, on any stream
  // cuMemcpy infers the direction from the addresses: the source may be host memory (a parked output)
  if (bytes > 0) KJ_CU(cuMemcpy, static_cast<CUdeviceptr>(dst), static_cast<CUdeviceptr>(src), bytes);
  KJ_CU(cuCtxSynchronize);
}

} // namespace kj::cuda
