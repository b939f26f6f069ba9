// The B-stationary kernel over CSC for bf16 A and B, fp32 accumulation and C.
#include "gpu/spmm/cuda_core/csc_tiled_kernel.cuh"
#include "gpu/spmm/cuda_core/kernels.hpp"

namespace sparsetc::detail::cudacore {

template void run_csc_tiled_spmm<CorePrecision::bf16>(const CoreCsc&, const CscTiledSchedule&, const CoreDenseArgs&,
                                                     cudaStream_t);

}  // namespace sparsetc::detail::cudacore
