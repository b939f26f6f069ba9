// The f16 kernels of the tensor-core SpMM (all tile configurations, both orders of B).
#include "gpu/spmm/bcsr_tc/tc_spmm_launch.cuh"

namespace sparsetc::detail::tc {

void launch_tc_spmm_f16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_half<F16Traits>(p, work_items, stream);
}

}  // namespace sparsetc::detail::tc
