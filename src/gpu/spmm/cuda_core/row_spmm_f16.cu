// The C-stationary kernels for fp16 A and B, fp32 accumulation.
#include "gpu/spmm/cuda_core/kernels.hpp"
#include "gpu/spmm/cuda_core/row_kernel.cuh"

namespace sparsetc::detail::cudacore {

template void run_row_spmm<CorePrecision::f16>(const CoreRows&, RowSchedule&, const CoreDenseArgs&, void*, cudaStream_t);

}  // namespace sparsetc::detail::cudacore
