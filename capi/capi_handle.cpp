// Handle entry points: creation on a backend, stream, validation and threading settings.
#include <algorithm>
#include <cstring>
#include <memory>

#include "capi_guard.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_memory.hpp"

using namespace sparsetc;

namespace {

std::unique_ptr<sparsetc_handle_s> make_handle(sparsetc_backend_t backend, int32_t device) {
  detail::require(backend == SPARSETC_BACKEND_AUTO || backend == SPARSETC_BACKEND_CPU ||
                      backend == SPARSETC_BACKEND_GPU,
                  SPARSETC_STATUS_INVALID_VALUE, "unknown backend ", backend);
  auto handle = std::make_unique<sparsetc_handle_s>();
  const int devices = backend == SPARSETC_BACKEND_CPU ? 0 : detail::cuda_device_count();
  if (backend == SPARSETC_BACKEND_GPU)
    detail::require(devices > 0, SPARSETC_STATUS_NO_DEVICE, "the GPU backend was asked for but no CUDA device is usable");
  if (devices > 0) {
    if (device < 0) SPARSETC_CUDA_CHECK(cudaGetDevice(&device));
    detail::require(device < devices, SPARSETC_STATUS_INVALID_VALUE, "device ", device, " does not exist (",
                    devices, " found)");
    handle->backend = SPARSETC_BACKEND_GPU;
    handle->device = device;
    handle->activate();
    handle->pool = std::make_unique<detail::PoolAllocator>(device);
    handle->memory.set_source(handle->pool.get());
  }
  SPARSETC_LOG(info, "handle created on the ", handle->backend == SPARSETC_BACKEND_GPU ? "GPU" : "CPU", " backend",
               handle->backend == SPARSETC_BACKEND_GPU ? detail::str(" (device ", device, ")") : std::string());
  return handle;
}

}  // namespace

extern "C" {

sparsetc_status_t sparsetc_create(sparsetc_handle_t* handle) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(handle, "handle");
    *handle = nullptr;
    *handle = make_handle(SPARSETC_BACKEND_AUTO, -1).release();
  });
}

sparsetc_status_t sparsetc_create_with_backend(sparsetc_handle_t* handle, sparsetc_backend_t backend,
                                               int32_t device) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(handle, "handle");
    *handle = nullptr;
    *handle = make_handle(backend, device).release();
  });
}

sparsetc_status_t sparsetc_destroy(sparsetc_handle_t handle) {
  return SPARSETC_GUARD(nullptr, { delete handle; });
}

sparsetc_status_t sparsetc_get_backend(sparsetc_handle_t handle, sparsetc_backend_t* backend) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(backend, "backend");
    *backend = handle->backend;
  });
}

sparsetc_status_t sparsetc_set_stream(sparsetc_handle_t handle, void* stream) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    handle->stream = static_cast<cudaStream_t>(stream);
  });
}

sparsetc_status_t sparsetc_get_stream(sparsetc_handle_t handle, void** stream) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(stream, "stream");
    *stream = handle->stream;
  });
}

sparsetc_status_t sparsetc_set_validation(sparsetc_handle_t handle, sparsetc_validation_t level) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    detail::require(level >= SPARSETC_VALIDATE_NONE && level <= SPARSETC_VALIDATE_VALUES,
                    SPARSETC_STATUS_INVALID_VALUE, "unknown validation level ", level);
    handle->validation = level;
  });
}

sparsetc_status_t sparsetc_get_validation(sparsetc_handle_t handle, sparsetc_validation_t* level) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(level, "level");
    *level = handle->validation;
  });
}

sparsetc_status_t sparsetc_set_duplicates(sparsetc_handle_t handle, sparsetc_duplicates_t policy) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    detail::require(policy == SPARSETC_DUPLICATES_ERROR || policy == SPARSETC_DUPLICATES_SUM,
                    SPARSETC_STATUS_INVALID_VALUE, "unknown duplicates policy ", policy);
    handle->duplicates = policy;
  });
}

sparsetc_status_t sparsetc_set_num_threads(sparsetc_handle_t handle, int32_t threads) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    detail::require(threads >= 0, SPARSETC_STATUS_INVALID_VALUE, "threads = ", threads, " is negative");
    handle->threads = threads;
  });
}

sparsetc_status_t sparsetc_set_allocator(sparsetc_handle_t handle, const sparsetc_allocator_t* allocator) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    detail::require(handle->backend == SPARSETC_BACKEND_GPU, SPARSETC_STATUS_NOT_SUPPORTED,
                    "the CPU backend allocates no device memory");
    detail::require(handle->memory.live_allocations() == 0, SPARSETC_STATUS_INVALID_STATE,
                    "the handle still holds ", handle->memory.live_allocations(),
                    " device allocations from its current allocator; destroy its matrices and plans first");
    if (!allocator) {
      handle->memory.set_source(handle->pool.get());
      handle->user_allocator.reset();
      return;
    }
    detail::require(allocator->struct_size >= sizeof(sparsetc_allocator_t), SPARSETC_STATUS_INVALID_VALUE,
                    "allocator->struct_size is ", allocator->struct_size, ", expected sizeof(sparsetc_allocator_t)");
    capi::require_pointer(reinterpret_cast<const void*>(allocator->allocate), "allocator->allocate");
    capi::require_pointer(reinterpret_cast<const void*>(allocator->deallocate), "allocator->deallocate");
    auto user = std::make_unique<detail::CallbackAllocator>(*allocator);
    handle->memory.set_source(user.get());
    handle->user_allocator = std::move(user);
  });
}

sparsetc_status_t sparsetc_get_memory_stats(sparsetc_handle_t handle, sparsetc_memory_stats_t* stats) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(stats, "stats");
    detail::require(stats->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                    "stats->struct_size is not set (set it to sizeof(sparsetc_memory_stats_t))");
    const bool pooled = handle->pool && !handle->user_allocator;
    sparsetc_memory_stats_t full{stats->struct_size,
                                 handle->memory.current_bytes(),
                                 handle->memory.peak_bytes(),
                                 handle->memory.allocations(),
                                 handle->memory.live_allocations(),
                                 pooled ? int64_t(handle->pool->reserved_bytes()) : 0};
    std::memcpy(stats, &full, std::min(stats->struct_size, sizeof full));  // append-only
  });
}

sparsetc_status_t sparsetc_reset_peak_memory(sparsetc_handle_t handle) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    handle->memory.reset_peak();
  });
}

}  // extern "C"
