// The B-stationary kernels for fp64 (A, B, C double).
#include "gpu/spmm/cuda_core/kernels.hpp"
#include "gpu/spmm/cuda_core/tiled_kernel.cuh"

namespace sparsetc::detail::cudacore {

template void run_tiled_spmm<CorePrecision::f64>(const CoreTiled&, const TiledSchedule&, const CoreDenseArgs&,
                                                 cudaStream_t);

}  // namespace sparsetc::detail::cudacore
