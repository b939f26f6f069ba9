// Properties of the current device that kernels size their grids by.
#pragma once

namespace sparsetc::detail {

// Streaming multiprocessors of the current device (cudaDevAttrMultiProcessorCount; errors throw).
int current_device_sm_count();

}  // namespace sparsetc::detail
