// The B-stationary kernels for bf16 A and B, fp32 accumulation.
#include "gpu/spmm/cuda_core/kernels.hpp"
#include "gpu/spmm/cuda_core/tiled_kernel.cuh"

namespace sparsetc::detail::cudacore {

template void run_tiled_spmm<CorePrecision::bf16>(const CoreTiled&, const TiledSchedule&, const CoreDenseArgs&,
                                                 cudaStream_t);

}  // namespace sparsetc::detail::cudacore
