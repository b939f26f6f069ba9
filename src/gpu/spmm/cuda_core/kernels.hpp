// Entry points of the kernel instantiations (one .cu file per kernel and precision, so they
// compile in parallel); dispatch.cpp picks one. No CUDA device headers here.
#pragma once

#include <cuda_runtime_api.h>

#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"

namespace sparsetc::detail::cudacore {

// Defined in row_kernel.cuh, instantiated in row_spmm_<precision>.cu.
template <CorePrecision P>
void run_row_spmm(const CoreRows& a, RowSchedule& schedule, const CoreDenseArgs& args, void* workspace,
                  cudaStream_t stream);
// Defined in tiled_kernel.cuh, instantiated in tiled_spmm_<precision>.cu.
template <CorePrecision P>
void run_tiled_spmm(const CoreTiled& a, const TiledSchedule& schedule, const CoreDenseArgs& args,
                    cudaStream_t stream);

// Defined in csc_tiled_kernel.cuh, instantiated in csc_tiled_spmm_<precision>.cu.
template <CorePrecision P>
void run_csc_tiled_spmm(const CoreCsc& a, const CscTiledSchedule& schedule, const CoreDenseArgs& args,
                        cudaStream_t stream);

}  // namespace sparsetc::detail::cudacore
