// The f64 kernels of the tensor-core SpMM (all tile configurations, both orders of B).
#include "gpu/spmm/bcsr_tc/tc_spmm_launch.cuh"

namespace sparsetc::detail::tc {

void launch_tc_spmm_f64(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_for_n<F64Traits, TcConfigF64N64, TcConfigF64N64>(p, work_items, stream);
}

}  // namespace sparsetc::detail::tc
