// RAII owners of driver objects (events, device memory, modules): released with the no-throw twins, always.
#pragma once

#include "cuda/driver.hpp"

#include <cstddef>
#include <utility>

namespace kj::cuda {

// A timing event (CU_EVENT_DEFAULT: timing enabled, spin-waits on cuEventSynchronize).
class event {
public:
  event() { KJ_CU(cuEventCreate, &m_event, CU_EVENT_DEFAULT); }
  ~event() {
    if (m_event != nullptr) KJ_CU_NOTHROW(cuEventDestroy, m_event);
  }
  event(const event&) = delete;
  event& operator=(const event&) = delete;
  event(event&& other) noexcept : m_event(std::exchange(other.m_event, nullptr)) {}
  event& operator=(event&&) = delete;

  CUevent get() const { return m_event; }

private:
  CUevent m_event = nullptr;
};

class device_buffer {
public:
  explicit device_buffer(std::size_t bytes) : m_bytes(bytes) {
    if (bytes > 0) KJ_CU(cuMemAlloc, &m_ptr, bytes);
  }
  ~device_buffer() {
    if (m_ptr != 0) KJ_CU_NOTHROW(cuMemFree, m_ptr);
  }
  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept
      : m_ptr(std::exchange(other.m_ptr, 0)), m_bytes(std::exchange(other.m_bytes, 0)) {}
  device_buffer& operator=(device_buffer&&) = delete;

  CUdeviceptr get() const { return m_ptr; }
  std::size_t bytes() const { return m_bytes; }

private:
  CUdeviceptr m_ptr = 0;
  std::size_t m_bytes = 0;
};

class module {
public:
  explicit module(const char* image) { KJ_CU(cuModuleLoadData, &m_module, image); }
  ~module() {
    if (m_module != nullptr) KJ_CU_NOTHROW(cuModuleUnload, m_module);
  }
  module(const module&) = delete;
  module& operator=(const module&) = delete;

  CUfunction function(const char* name) const {
    CUfunction f = nullptr;
    KJ_CU(cuModuleGetFunction, &f, m_module, name);
    return f;
  }

private:
  CUmodule m_module = nullptr;
};

} // namespace kj::cuda
