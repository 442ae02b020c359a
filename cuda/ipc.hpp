// Device memory shared between two processes: the judge's arena, opened by the runner. By file descriptor
// (the driver's virtual memory API, a POSIX descriptor passed over a Unix socket), which crosses the runner's
// PID namespace; by CUDA IPC handle where the device cannot export descriptors (that needs one namespace).
#pragma once

#include <array>
#include <cstdint>

namespace kj::cuda {

std::uint64_t mem_alloc(int device, std::uint64_t bytes);
void mem_free(std::uint64_t ptr);
// Free and total bytes of the device (every process's allocations counted).
void mem_info(int device, std::uint64_t& free_bytes, std::uint64_t& total_bytes);
// The 64-byte handle of an allocation made by mem_alloc (in this process).
std::array<unsigned char, 64> ipc_handle(std::uint64_t ptr);
// Maps another process's allocation into this context; ipc_close unmaps it.
std::uint64_t ipc_open(int device, const std::array<unsigned char, 64>& handle);
void ipc_close(std::uint64_t ptr);
// Whether the device can export memory as POSIX file descriptors (virtual memory management with them).
bool can_share_fd(int device);
struct shared_allocation {
  std::uint64_t ptr = 0;
  std::uint64_t bytes = 0; // rounded up to the allocation granularity: the importer maps this many
  int fd = -1;             // the exported descriptor: the caller sends it and closes it
};
// Allocates at least `bytes` of device memory that can be exported, maps it here and exports it.
shared_allocation share_alloc(int device, std::uint64_t bytes);
// Maps an allocation another process exported (its descriptor, which this call closes) into this context.
std::uint64_t share_import(int device, int fd, std::uint64_t bytes);
// Unmaps and releases an allocation of share_alloc or share_import (the memory goes with its last mapping).
void share_free(std::uint64_t ptr);
// Copies device memory and waits for every stream of the context (the copy and what came before it).
void copy_and_sync(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes);

} // namespace kj::cuda
