// The plugin's guard around every extern "C" entry point: C++ exceptions become status codes and messages,
// nothing escapes into the C caller (plugin.cpp, plugin_memory.cpp). Internal to the plugin.
#pragma once

#include "cuda/cuda_plugin.h"
#include "cuda/driver.hpp"
#include "cuda/event_subject.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <new>
#include <stdexcept>
#include <string_view>

namespace kj::cuda::plugin_guard {

template <std::size_t N>
void copy_text(char (&out)[N], std::string_view text) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

inline int fail(kj_cuda_error* error, int status, std::string_view message) {
  if (error != nullptr) {
    error->status = status;
    copy_text(error->message, message);
  }
  return status;
}

// Runs body and maps every exception to a status; nothing escapes into the C caller.
template <class Body>
int guarded(kj_cuda_error* error, Body&& body) noexcept {
  try {
    body();
    if (error != nullptr) {
      error->status = KJ_CUDA_OK;
      error->message[0] = '\0';
    }
    return KJ_CUDA_OK;
  } catch (const callback_failed& e) {
    return fail(error, KJ_CUDA_CALLBACK_FAILED, e.what());
  } catch (const cuda_error& e) {
    return fail(error, KJ_CUDA_DRIVER_ERROR, e.what());
  } catch (const tool_error& e) {
    return fail(error, KJ_CUDA_DRIVER_ERROR, e.what());
  } catch (const unavailable_error& e) {
    return fail(error, KJ_CUDA_UNAVAILABLE, e.what());
  } catch (const state_error& e) {
    return fail(error, KJ_CUDA_STATE_ERROR, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(error, KJ_CUDA_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return fail(error, KJ_CUDA_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(error, KJ_CUDA_INTERNAL_ERROR, e.what());
  } catch (...) {
    return fail(error, KJ_CUDA_INTERNAL_ERROR, "unknown exception");
  }
}

inline void require(const void* pointer, const char* what) {
  if (pointer == nullptr) throw std::invalid_argument(fmt::format("{} must not be NULL", what));
}

} // namespace kj::cuda::plugin_guard
