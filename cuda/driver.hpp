// The CUDA driver API, resolved at run time from libcuda.so.1, and the one macro every driver call goes
// through.
#pragma once

#include <cstdint>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdexcept>
#include <string>

namespace kj::cuda {

// A driver call failed. what(): "<file>:<line>: <call> failed: <CUDA_ERROR_NAME> (<description>)".
class cuda_error : public std::runtime_error {
public:
  cuda_error(CUresult result, const std::string& message) : std::runtime_error(message), m_result(result) {}
  CUresult result() const { return m_result; }

private:
  CUresult m_result;
};

// The driver (or CUPTI/NVML) is not there: no libcuda.so.1, no GPU, or the plugin was built without it.
class unavailable_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A CUPTI or NVML call failed (same message format as cuda_error).
class tool_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A call out of order, e.g. ending a trace that was never begun.
class state_error : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

// Each entry: the function and the CUDA version of the ABI we call it with (the PFN_<name>_v<version> type of
// cudaTypedefs.h). Explicit versions matter: cuGetProcAddress("cuCtxSynchronize", 13000) would return the
// CUDA 13 variant that takes a context argument.
#define KJ_CUDA_DRIVER_FUNCTIONS(X)                                                                          \
  X(cuGetErrorString, 6000)                                                                                  \
  X(cuGetErrorName, 6000)                                                                                    \
  X(cuInit, 2000)                                                                                            \
  X(cuDriverGetVersion, 2020)                                                                                \
  X(cuDeviceGet, 2000)                                                                                       \
  X(cuDeviceGetName, 2000)                                                                                   \
  X(cuDeviceGetAttribute, 2000)                                                                              \
  X(cuDeviceGetPCIBusId, 4010)                                                                               \
  X(cuDeviceTotalMem, 3020)                                                                                  \
  X(cuDevicePrimaryCtxRetain, 7000)                                                                          \
  X(cuCtxGetCurrent, 4000)                                                                                   \
  X(cuCtxSetCurrent, 4000)                                                                                   \
  X(cuCtxGetDevice, 2000)                                                                                    \
  X(cuCtxSynchronize, 2000)                                                                                  \
  X(cuCtxSetLimit, 3010)                                                                                     \
  X(cuCtxResetPersistingL2Cache, 11000)                                                                      \
  X(cuStreamSetAttribute, 11000)                                                                             \
  X(cuStreamGetCtx, 9020)                                                                                    \
  X(cuStreamCreate, 2000)                                                                                    \
  X(cuStreamDestroy, 4000)                                                                                   \
  X(cuStreamSynchronize, 2000)                                                                               \
  X(cuEventCreate, 2000)                                                                                     \
  X(cuEventDestroy, 4000)                                                                                    \
  X(cuEventRecord, 2000)                                                                                     \
  X(cuEventElapsedTime, 2000)                                                                                \
  X(cuMemAlloc, 3020)                                                                                        \
  X(cuMemFree, 3020)                                                                                         \
  X(cuMemGetInfo, 3020)                                                                                      \
  X(cuMemsetD8Async, 3020)                                                                                   \
  X(cuIpcGetMemHandle, 4010)                                                                                 \
  X(cuIpcOpenMemHandle, 11000)                                                                               \
  X(cuIpcCloseMemHandle, 4010)                                                                               \
  X(cuMemcpy, 4000)                                                                                          \
  X(cuMemGetAllocationGranularity, 10020)                                                                    \
  X(cuMemCreate, 10020)                                                                                      \
  X(cuMemRelease, 10020)                                                                                     \
  X(cuMemAddressReserve, 10020)                                                                              \
  X(cuMemAddressFree, 10020)                                                                                 \
  X(cuMemMap, 10020)                                                                                         \
  X(cuMemUnmap, 10020)                                                                                       \
  X(cuMemSetAccess, 10020)                                                                                   \
  X(cuMemExportToShareableHandle, 10020)                                                                     \
  X(cuMemImportFromShareableHandle, 10020)                                                                   \
  X(cuModuleLoadData, 2000)                                                                                  \
  X(cuModuleUnload, 2000)                                                                                    \
  X(cuModuleGetFunction, 2000)                                                                               \
  X(cuLaunchKernel, 4000)

struct driver_api {
#define KJ_CUDA_DRIVER_MEMBER(name, version) PFN_##name##_v##version fn_##name = nullptr;
  KJ_CUDA_DRIVER_FUNCTIONS(KJ_CUDA_DRIVER_MEMBER)
#undef KJ_CUDA_DRIVER_MEMBER
};

// Loads libcuda.so.1 and resolves every function once (thread-safe), then calls cuInit(0). Throws
// unavailable_error when there is no driver, or it predates CUDA 12.0 (no cuGetProcAddress_v2).
const driver_api& driver();
// The table without loading it: for cleanup paths, which only run after driver() succeeded once.
const driver_api& loaded_driver() noexcept;

// "CUDA_ERROR_X (description)" for a result, through the driver's own strings.
std::string error_text(CUresult result);

// Throws cuda_error for anything but CUDA_SUCCESS.
void check(CUresult result, const char* call, const char* file, int line);

// The calling thread's current context; when it has none, `device`'s primary context (device < 0: 0) is
// retained (for the life of the process: torch uses the same one) and made current. Throws
// std::invalid_argument when device >= 0 and the current context is on another device.
CUcontext bind_context(int device);

// Throws std::invalid_argument when `stream` belongs to a context other than `context`.
void check_stream(CUstream stream, CUcontext context);

CUdevice context_device();

inline CUstream to_stream(std::uint64_t handle) {
  return reinterpret_cast<CUstream>(handle);
}

} // namespace kj::cuda

// Every driver call: KJ_CU(cuMemAlloc, &ptr, bytes). Throws kj::cuda::cuda_error with file:line, the call and
// the driver's error name and string.
#define KJ_CU(name, ...)                                                                                     \
  ::kj::cuda::check(::kj::cuda::driver().fn_##name(__VA_ARGS__), #name "(" #__VA_ARGS__ ")", __FILE__,       \
                    __LINE__)

// The no-throw twin for cleanup paths (destructors): returns the CUresult and never throws.
#define KJ_CU_NOTHROW(name, ...) ::kj::cuda::loaded_driver().fn_##name(__VA_ARGS__)
