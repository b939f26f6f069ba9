// Properties of the current device that kernels size their grids by.
#pragma once

#include <cstdint>

namespace sparsetc::detail {

// Streaming multiprocessors of the current device (cudaDevAttrMultiProcessorCount; errors throw).
int current_device_sm_count();

// Bytes of L2 cache of the current device (cudaDevAttrL2CacheSize; errors throw).
int64_t current_device_l2_bytes();

}  // namespace sparsetc::detail
