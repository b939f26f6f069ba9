// The C-stationary kernels for fp32 (A, B, C float).
#include "gpu/spmm/cuda_core/kernels.hpp"
#include "gpu/spmm/cuda_core/row_kernel.cuh"

namespace sparsetc::detail::cudacore {

template void run_row_spmm<CorePrecision::f32>(const CoreRows&, RowSchedule&, const CoreDenseArgs&, void*, cudaStream_t);

}  // namespace sparsetc::detail::cudacore
