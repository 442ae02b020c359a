// Implements the IPC arena functions on the driver API, in the primary context torch uses.
#include "cuda/ipc.hpp"

#include "cuda/driver.hpp"

#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <unistd.h>

namespace kj::cuda {
namespace {

// The virtual memory API's allocations of this process: pointer -> (handle, size), to unmap and release.
struct shared_registry {
  std::mutex mutex;
  std::map<std::uint64_t, std::pair<CUmemGenericAllocationHandle, std::uint64_t>> entries;
};

shared_registry& registry() {
  static shared_registry r;
  return r;
}

CUmemAllocationProp shareable_prop(CUdevice device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = static_cast<int>(device);
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

// Reserves an address range, maps the allocation there and opens it to this device; registered.
std::uint64_t map_here(CUmemGenericAllocationHandle handle, std::uint64_t bytes, CUdevice device) {
  CUdeviceptr ptr = 0;
  KJ_CU(cuMemAddressReserve, &ptr, bytes, 0, 0, 0);
  try {
    KJ_CU(cuMemMap, ptr, bytes, 0, handle, 0);
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = static_cast<int>(device);
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    KJ_CU(cuMemSetAccess, ptr, bytes, &access, 1);
  } catch (...) {
    (void)KJ_CU_NOTHROW(cuMemUnmap, ptr, bytes);
    (void)KJ_CU_NOTHROW(cuMemAddressFree, ptr, bytes);
    throw;
  }
  const std::lock_guard lock(registry().mutex);
  registry().entries[static_cast<std::uint64_t>(ptr)] = {handle, bytes};
  return static_cast<std::uint64_t>(ptr);
}

} // namespace

bool can_share_fd(int device) {
  bind_context(device);
  const CUdevice dev = context_device();
  int vmm = 0, fd = 0;
  KJ_CU(cuDeviceGetAttribute, &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
  KJ_CU(cuDeviceGetAttribute, &fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev);
  return vmm != 0 && fd != 0;
}

shared_allocation share_alloc(int device, std::uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("share_alloc: zero bytes");
  bind_context(device);
  const CUdevice dev = context_device();
  const CUmemAllocationProp prop = shareable_prop(dev);
  std::size_t granularity = 0;
  KJ_CU(cuMemGetAllocationGranularity, &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
  if (granularity == 0) granularity = 2u << 20;
  shared_allocation out;
  out.bytes = (bytes + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle handle = 0;
  KJ_CU(cuMemCreate, &handle, out.bytes, &prop, 0);
  try {
    int fd = -1;
    KJ_CU(cuMemExportToShareableHandle, &fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    out.fd = fd;
    out.ptr = map_here(handle, out.bytes, dev);
  } catch (...) {
    if (out.fd >= 0) ::close(out.fd);
    (void)KJ_CU_NOTHROW(cuMemRelease, handle);
    throw;
  }
  return out;
}

std::uint64_t share_import(int device, int fd, std::uint64_t bytes) {
  bind_context(device);
  const CUdevice dev = context_device();
  CUmemGenericAllocationHandle handle = 0;
  const CUresult imported = KJ_CU_NOTHROW(cuMemImportFromShareableHandle, &handle,
                                          reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd)),
                                          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ::close(fd); // the handle holds the memory: no descriptor stays for the candidate to find
  check(imported, "cuMemImportFromShareableHandle", __FILE__, __LINE__);
  try {
    return map_here(handle, bytes, dev);
  } catch (...) {
    (void)KJ_CU_NOTHROW(cuMemRelease, handle);
    throw;
  }
}

void share_free(std::uint64_t ptr) {
  std::pair<CUmemGenericAllocationHandle, std::uint64_t> entry;
  {
    const std::lock_guard lock(registry().mutex);
    const auto it = registry().entries.find(ptr);
    if (it == registry().entries.end()) throw std::invalid_argument("share_free: not a shared allocation");
    entry = it->second;
    registry().entries.erase(it);
  }
  bind_context(-1);
  KJ_CU(cuCtxSynchronize); // nothing may still use it
  KJ_CU(cuMemUnmap, static_cast<CUdeviceptr>(ptr), entry.second);
  KJ_CU(cuMemAddressFree, static_cast<CUdeviceptr>(ptr), entry.second);
  KJ_CU(cuMemRelease, entry.first);
}

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
