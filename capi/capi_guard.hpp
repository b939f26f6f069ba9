// The C ABI boundary: every exported function runs its body through guarded(), which turns
// engine exceptions into a status code and keeps the message (per handle, and per thread for
// failures without a handle). No exception ever crosses into C.
#pragma once

#include <new>
#include <string>

#include "core/error.hpp"
#include "engine/handle.hpp"
#include "gpu/device_scope.hpp"
#include "sparsetc/sparsetc.h"

namespace sparsetc::capi {

// Last failure message of this thread (what sparsetc_get_last_error(NULL, ...) returns).
std::string& thread_last_error();

sparsetc_status_t record_failure(sparsetc_handle_s* handle, const char* function, sparsetc_status_t status,
                                 const char* message) noexcept;

template <typename Body>
sparsetc_status_t guarded(sparsetc_handle_s* handle, const char* function, Body&& body) noexcept {
  // The handle's device is current during the call; the caller's is restored after.
  detail::DeviceScope scope(handle && handle->backend == SPARSETC_BACKEND_GPU ? handle->device : -1);
  try {
    body();
    if (handle) handle->last_error.clear();
    thread_last_error().clear();
    return SPARSETC_STATUS_SUCCESS;
  } catch (const detail::Error& e) {
    return record_failure(handle, function, e.status(), e.what());
  } catch (const std::bad_alloc&) {
    return record_failure(handle, function, SPARSETC_STATUS_ALLOC_FAILED, "out of host memory");
  } catch (const std::exception& e) {
    return record_failure(handle, function, SPARSETC_STATUS_INTERNAL_ERROR, e.what());
  } catch (...) {
    return record_failure(handle, function, SPARSETC_STATUS_UNKNOWN_EXCEPTION, "unknown exception");
  }
}

// Argument checks shared by the entry points; they name the argument, as the message must.
inline void require_pointer(const void* p, const char* name) {
  detail::require(p != nullptr, SPARSETC_STATUS_NULL_POINTER, name, " is NULL");
}

// Copies a string into a caller's buffer, always terminated, truncated to buffer_size.
void copy_string(const std::string& text, char* buffer, size_t buffer_size);

}  // namespace sparsetc::capi

#define SPARSETC_GUARD(handle, ...) ::sparsetc::capi::guarded((handle), __func__, [&]() __VA_ARGS__)
