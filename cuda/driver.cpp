// Resolves the driver API from libcuda.so.1 at run time, so the plugin itself loads on machines without a
// driver.
#include "cuda/driver.hpp"

#include <atomic>
#include <dlfcn.h>
#include <fmt/format.h>
#include <mutex>

namespace kj::cuda {
namespace {

driver_api g_driver;

template <class F>
void resolve(PFN_cuGetProcAddress_v12000 get_proc, const char* name, int version, F& fn) {
  void* pointer = nullptr;
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SUCCESS;
  // Legacy-stream variants: stream 0 then means the legacy default stream, as in torch.
  const CUresult result = get_proc(name, &pointer, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status);
  if (result != CUDA_SUCCESS || pointer == nullptr) {
    throw unavailable_error(fmt::format("the NVIDIA driver does not provide {} (ABI of CUDA {}.{}): "
                                        "cuGetProcAddress returned {}, symbol status {}",
                                        name, version / 1000, version % 1000 / 10, static_cast<int>(result),
                                        static_cast<int>(status)));
  }
  fn = reinterpret_cast<F>(pointer);
}

driver_api load_driver() {
  // The handle is never closed: torch has the same library loaded, and the table lives as long as the
  // process.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw unavailable_error(fmt::format("the NVIDIA driver library libcuda.so.1 could not be loaded ({}): "
                                        "this machine has no GPU driver, or it is not on the library path",
                                        dlerror()));
  }
  auto get_proc = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
  if (get_proc == nullptr) {
    throw unavailable_error("libcuda.so.1 has no cuGetProcAddress_v2: the NVIDIA driver predates CUDA 12.0");
  }
  driver_api api;
#define KJ_CUDA_RESOLVE(name, version) resolve(get_proc, #name, version, api.fn_##name);
  KJ_CUDA_DRIVER_FUNCTIONS(KJ_CUDA_RESOLVE)
#undef KJ_CUDA_RESOLVE
  const CUresult init = api.fn_cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    api.fn_cuGetErrorName(init, &name);
    api.fn_cuGetErrorString(init, &text);
    throw unavailable_error(fmt::format("cuInit(0) failed: {} ({}): no usable GPU", name ? name : "?",
                                        text ? text : "no description"));
  }
  return api;
}

} // namespace

const driver_api& driver() {
  // Every KJ_CU call comes through here, some inside the timed window: after the first load it is one load.
  static std::atomic<bool> loaded{false};
  if (loaded.load(std::memory_order_acquire)) return g_driver;
  static std::mutex mutex;
  static std::string failure;
  const std::lock_guard lock(mutex);
  if (!loaded.load(std::memory_order_relaxed)) {
    // A failure is remembered: the reason does not change within a process, and dlopen is not free.
    if (!failure.empty()) throw unavailable_error(failure);
    try {
      g_driver = load_driver();
      loaded.store(true, std::memory_order_release);
    } catch (const unavailable_error& e) {
      failure = e.what();
      throw;
    }
  }
  return g_driver;
}

const driver_api& loaded_driver() noexcept {
  return g_driver;
}

std::string error_text(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (g_driver.fn_cuGetErrorName == nullptr || g_driver.fn_cuGetErrorName(result, &name) != CUDA_SUCCESS) {
    name = nullptr;
  }
  if (g_driver.fn_cuGetErrorString == nullptr ||
      g_driver.fn_cuGetErrorString(result, &text) != CUDA_SUCCESS) {
    text = nullptr;
  }
  return fmt::format("{} ({})", name ? name : fmt::format("CUresult {}", static_cast<int>(result)),
                     text ? text : "no description");
}

void check(CUresult result, const char* call, const char* file, int line) {
  if (result == CUDA_SUCCESS) return;
  throw cuda_error(result, fmt::format("{}:{}: {} failed: {}", file, line, call, error_text(result)));
}

CUcontext bind_context(int device) {
  CUcontext context = nullptr;
  KJ_CU(cuCtxGetCurrent, &context);
  CUdevice handle = 0;
  KJ_CU(cuDeviceGet, &handle, device < 0 ? 0 : device);
  if (context != nullptr) {
    if (device >= 0 && context_device() != handle) {
      throw std::invalid_argument(
          fmt::format("device {} was asked for, but the thread's current CUDA context is "
                      "on device {}",
                      device, static_cast<int>(context_device())));
    }
    return context;
  }
  KJ_CU(cuDevicePrimaryCtxRetain, &context, handle);
  KJ_CU(cuCtxSetCurrent, context);
  return context;
}

void check_stream(CUstream stream, CUcontext context) {
  CUcontext owner = nullptr;
  KJ_CU(cuStreamGetCtx, stream, &owner);
  if (owner != context) {
    throw std::invalid_argument(
        fmt::format("stream {} belongs to another CUDA context than the thread's current "
                    "one (torch's); pass a stream of the current device",
                    static_cast<const void*>(stream)));
  }
}

CUdevice context_device() {
  CUdevice device = 0;
  KJ_CU(cuCtxGetDevice, &device);
  return device;
}

} // namespace kj::cuda
