// The row kernel's shape, shared by the kernels (core_values.cuh, row_kernel.cuh) and the host code
// that sizes their work (schedule.cu), so the two cannot drift apart. Plain C++: no device header.
#pragma once

namespace sparsetc::detail::cudacore {

// Entries each lane has in flight per step of a row.
inline constexpr int kUnroll = 4;
// The row kernel's CTAs: 4 warps, so the register budget can be set in steps of 4 warps per SM.
inline constexpr int kRowWarps = 4;

}  // namespace sparsetc::detail::cudacore
