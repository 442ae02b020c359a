// The plugin loader's device memory, its sharing between processes (IPC handles, file descriptors), streams
// and samplers: each a call through the bound function table, its status turned into plugin_error.
#include "cuda/plugin_functions.hpp"
#include "cuda/plugin_loader.hpp"

#include <cstring>
#include <string>
#include <utility>

namespace kj::cuda {

std::uint64_t plugin::stream_create() const {
  std::uint64_t stream = 0;
  kj_cuda_error error{};
  throw_status(m_fn->stream_create(&stream, &error), error);
  return stream;
}

void plugin::stream_destroy(std::uint64_t stream) const {
  kj_cuda_error error{};
  throw_status(m_fn->stream_destroy(stream, &error), error);
}

void plugin::spin(std::uint64_t stream, std::uint64_t ns) const {
  kj_cuda_error error{};
  throw_status(m_fn->spin(stream, ns, &error), error);
}

std::uint64_t plugin::mem_alloc(std::uint64_t bytes, int device) const {
  std::uint64_t ptr = 0;
  kj_cuda_error error{};
  throw_status(m_fn->mem_alloc(device, bytes, &ptr, &error), error);
  return ptr;
}

std::pair<std::uint64_t, std::uint64_t> plugin::mem_info(int device) const {
  std::uint64_t free = 0, total = 0;
  kj_cuda_error error{};
  throw_status(m_fn->mem_info(device, &free, &total, &error), error);
  return {free, total};
}

void plugin::mem_free(std::uint64_t ptr) const {
  kj_cuda_error error{};
  throw_status(m_fn->mem_free(ptr, &error), error);
}

std::string plugin::ipc_handle(std::uint64_t ptr) const {
  std::string handle(64, '\0');
  kj_cuda_error error{};
  throw_status(m_fn->ipc_get_handle(ptr, reinterpret_cast<unsigned char*>(handle.data()), &error), error);
  return handle;
}

std::uint64_t plugin::ipc_open(const std::string& handle, int device) const {
  if (handle.size() != 64) throw std::invalid_argument("plugin::ipc_open: a CUDA IPC handle has 64 bytes");
  std::uint64_t ptr = 0;
  kj_cuda_error error{};
  throw_status(m_fn->ipc_open(device, reinterpret_cast<const unsigned char*>(handle.data()), &ptr, &error),
               error);
  return ptr;
}

void plugin::ipc_close(std::uint64_t ptr) const {
  kj_cuda_error error{};
  throw_status(m_fn->ipc_close(ptr, &error), error);
}

shared_memory plugin::share_alloc(std::uint64_t bytes, int device) const {
  shared_memory out;
  std::int32_t fd = -1;
  kj_cuda_error error{};
  throw_status(m_fn->share_alloc(device, bytes, &out.ptr, &out.bytes, &fd, &error), error);
  out.fd = fd;
  return out;
}

std::uint64_t plugin::share_import(int fd, std::uint64_t bytes, int device) const {
  std::uint64_t ptr = 0;
  kj_cuda_error error{};
  throw_status(m_fn->share_import(device, fd, bytes, &ptr, &error), error);
  return ptr;
}

void plugin::share_free(std::uint64_t ptr) const {
  kj_cuda_error error{};
  throw_status(m_fn->share_free(ptr, &error), error);
}

sampler::sampler(const plugin& p, std::uint64_t stream, std::uint64_t flush_bytes) : m_fn(p.m_fn.get()) {
  kj_cuda_error error{};
  throw_status(m_fn->sampler_create(stream, flush_bytes, &m_handle, &m_flush_bytes, &error), error);
}

sampler::~sampler() {
  if (m_handle) m_fn->sampler_destroy(m_handle, nullptr);
}

void sampler::flush() const {
  kj_cuda_error error{};
  throw_status(m_fn->sampler_flush(m_handle, &error), error);
}

void sampler::start() const {
  kj_cuda_error error{};
  throw_status(m_fn->sampler_start(m_handle, &error), error);
}

std::pair<double, double> sampler::stop() const {
  double event_ms = 0, host_ms = 0;
  kj_cuda_error error{};
  throw_status(m_fn->sampler_stop(m_handle, &event_ms, &host_ms, &error), error);
  return {event_ms, host_ms};
}

void plugin::copy_sync(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) const {
  kj_cuda_error error{};
  throw_status(m_fn->copy_sync(dst, src, bytes, &error), error);
}

} // namespace kj::cuda
