// Device memory shared between two processes through CUDA IPC: the judge's arena, opened by the runner.
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
// Copies device memory and waits for every stream of the context (the copy and what came before it).
void copy_and_sync(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes);

} // namespace kj::cuda
