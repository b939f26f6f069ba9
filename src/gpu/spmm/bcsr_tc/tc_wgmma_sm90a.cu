// The wgmma kernels of the tensor-core SpMM (fp16 / bf16, wide tiles, row-major B; TcSpmmArgs::
// kernel_variant = 3). This translation unit is built for sm_90a only (src/CMakeLists.txt) and its
// kernels are launched on compute capability 9.0 devices only (tc_spmm.cpp).
#include "gpu/spmm/bcsr_tc/tc_spmm_launch.cuh"
#include "gpu/spmm/bcsr_tc/tc_wgmma_kernel.cuh"

namespace sparsetc::detail::tc {
namespace {

template <class T>
void launch_wgmma_kernel(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_ring_kernel<T, TcWgConfigN128, &tc_spmm_wgmma_kernel<T, TcWgConfigN128>>(p, work_items, stream);
}

}  // namespace

void launch_tc_wgmma_f16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_wgmma_kernel<F16Traits>(p, work_items, stream);
}
void launch_tc_wgmma_bf16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream) {
  launch_wgmma_kernel<Bf16Traits>(p, work_items, stream);
}

}  // namespace sparsetc::detail::tc
