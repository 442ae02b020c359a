// Implements the self-test streams and the %globaltimer spin kernel (PTX, JIT-compiled by the driver).
#include "cuda/selftest.hpp"

#include "cuda/resources.hpp"

#include <memory>
#include <mutex>

namespace kj::cuda {

// PTX ISA 7.0 for sm_75 (the oldest architecture CUDA 13 supports); the driver JIT-compiles it for the GPU.
const char* const k_spin_ptx = R"ptx(
.version 7.0
.target sm_75
.address_size 64

.visible .entry kj_spin_ns(.param .u64 kj_spin_ns_param_0)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;

  ld.param.u64 %rd1, [kj_spin_ns_param_0];
  mov.u64 %rd2, %globaltimer;
SPIN:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra SPIN;
  ret;
}
)ptx";

namespace {

struct spin_kernel {
  CUcontext context = nullptr;
  std::unique_ptr<module> loaded;
  CUfunction function = nullptr;
};

CUfunction spin_function(CUcontext context) {
  static std::mutex mutex;
  static auto* cache = new spin_kernel; // never unloaded: the driver may be gone by the time statics die
  const std::lock_guard lock(mutex);
  if (cache->context != context || cache->function == nullptr) {
    auto loaded = std::make_unique<module>(k_spin_ptx);
    cache->function = loaded->function("kj_spin_ns");
    cache->loaded = std::move(loaded);
    cache->context = context;
  }
  return cache->function;
}

} // namespace

std::uint64_t create_stream() {
  bind_context(-1);
  CUstream stream = nullptr;
  KJ_CU(cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  return reinterpret_cast<std::uint64_t>(stream);
}

void destroy_stream(std::uint64_t stream) {
  if (stream == 0)
    throw std::invalid_argument("destroy_stream: the legacy default stream cannot be destroyed");
  bind_context(-1);
  KJ_CU(cuStreamDestroy, to_stream(stream));
}

void launch_spin(std::uint64_t stream, std::uint64_t ns) {
  const CUcontext context = bind_context(-1);
  check_stream(to_stream(stream), context);
  const CUfunction function = spin_function(context);
  void* args[] = {&ns};
  KJ_CU(cuLaunchKernel, function, 1, 1, 1, 1, 1, 1, 0, to_stream(stream), args, nullptr);
}

} // namespace kj::cuda
