// The plugin's extern "C" entry points for device memory, its sharing between processes (IPC handles, file
// descriptors) and streams: argument checks and C++ calls under the plugin's guard (plugin_guard.hpp).
#include "cuda/cuda_plugin.h"
#include "cuda/ipc.hpp"
#include "cuda/plugin_guard.hpp"
#include "cuda/selftest.hpp"

#include <array>
#include <cstring>

using namespace kj::cuda;
using namespace kj::cuda::plugin_guard;

extern "C" {

int kj_cuda_stream_create(uint64_t* stream, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(stream, "stream");
    *stream = create_stream();
  });
}

int kj_cuda_stream_destroy(uint64_t stream, kj_cuda_error* error) {
  return guarded(error, [&] { destroy_stream(stream); });
}

int kj_cuda_spin(uint64_t stream, uint64_t ns, kj_cuda_error* error) {
  return guarded(error, [&] { launch_spin(stream, ns); });
}

int kj_cuda_mem_alloc(int32_t device, uint64_t bytes, uint64_t* ptr, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(ptr, "ptr");
    *ptr = kj::cuda::mem_alloc(device, bytes);
  });
}

int kj_cuda_mem_info(int32_t device, uint64_t* free_bytes, uint64_t* total_bytes, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(free_bytes, "free_bytes");
    require(total_bytes, "total_bytes");
    kj::cuda::mem_info(device, *free_bytes, *total_bytes);
  });
}

int kj_cuda_mem_free(uint64_t ptr, kj_cuda_error* error) {
  return guarded(error, [&] { kj::cuda::mem_free(ptr); });
}

int kj_cuda_ipc_get_handle(uint64_t ptr, unsigned char handle[64], kj_cuda_error* error) {
  return guarded(error, [&] {
    require(handle, "handle");
    const auto h = kj::cuda::ipc_handle(ptr);
    std::memcpy(handle, h.data(), h.size());
  });
}

int kj_cuda_ipc_open(int32_t device, const unsigned char handle[64], uint64_t* ptr, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(handle, "handle");
    require(ptr, "ptr");
    std::array<unsigned char, 64> h{};
    std::memcpy(h.data(), handle, h.size());
    *ptr = kj::cuda::ipc_open(device, h);
  });
}

int kj_cuda_ipc_close(uint64_t ptr, kj_cuda_error* error) {
  return guarded(error, [&] { kj::cuda::ipc_close(ptr); });
}

int kj_cuda_share_alloc(int32_t device, uint64_t bytes, uint64_t* ptr, uint64_t* size, int32_t* fd,
                        kj_cuda_error* error) {
  return guarded(error, [&] {
    require(ptr, "ptr");
    require(size, "size");
    require(fd, "fd");
    const shared_allocation a = share_alloc(device, bytes);
    *ptr = a.ptr;
    *size = a.bytes;
    *fd = a.fd;
  });
}

int kj_cuda_share_import(int32_t device, int32_t fd, uint64_t size, uint64_t* ptr, kj_cuda_error* error) {
  return guarded(error, [&] {
    require(ptr, "ptr");
    *ptr = share_import(device, fd, size);
  });
}

int kj_cuda_share_free(uint64_t ptr, kj_cuda_error* error) {
  return guarded(error, [&] { share_free(ptr); });
}

int kj_cuda_copy_sync(uint64_t dst, uint64_t src, uint64_t bytes, kj_cuda_error* error) {
  return guarded(error, [&] { kj::cuda::copy_and_sync(dst, src, bytes); });
}

} // extern "C"
