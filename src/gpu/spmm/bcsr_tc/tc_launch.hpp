// Between the host dispatch (tc_spmm.cpp) and the kernel instantiations (tc_spmm_<precision>.cu):
// the kernel parameters, the tile configurations by N, and one launch function per precision.
// No CUDA device headers here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "gpu/spmm/bcsr_tc/tc_schedule.hpp"

namespace sparsetc::detail::tc {

struct TcKernelParams {
  const TcWorkItem* items = nullptr;
  const TcEntry* entries = nullptr;
  const void* values = nullptr;  // the operand's blocks (TcBcsrOperand::values)
  int64_t m = 0, k = 0, n = 0;
  int64_t n_tiles = 0;           // CTAs per work item: ceil(n / TN)
  int64_t work = 0;              // work items x n_tiles
  int64_t loop_ctas = 0;         // > 0: the warp-specialized kernel's CTAs, which loop over the work
  const void* b = nullptr;
  int64_t ldb = 0;
  int b_col_major = 0;
  int b_aligned = 0;             // B and ldb allow 16-byte cp.async; else a slower element-wise path
  void* c = nullptr;
  int64_t ldc = 0;
  int c_col_major = 0;
  int c_pairs = 0;               // row-major C, 2-element aligned rows: adjacent columns stored as pairs
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
  double alpha = 1.0, beta = 0.0;
  const int64_t* row_map = nullptr;
  void* partials = nullptr;      // split items' partial tiles (accumulator type), workspace
  unsigned* counters = nullptr;  // split panels x n_tiles arrival counters: zero at the launch, left zero
  int kernel_variant = 0;          // TcSpmmArgs::kernel_variant
  int dense_stages = 0;          // the kernels for dense entries (TcBcsrOperand::dense_stages)
};

// The N tile of the configuration chosen for n columns, and the partial tile (accumulators per
// CTA) its split items store; both fix the workspace size.
struct TcTileShape {
  int tn = 0;
  int64_t partial_elements = 0;  // accumulators of one CTA tile
  size_t accumulator_bytes = 0;
};
TcTileShape tc_tile_shape(TcPrecision precision, int64_t n);

// Launches the kernel for the configuration of p.n (grid: work items x n_tiles) on `stream`.
void launch_tc_spmm_f16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);
void launch_tc_spmm_bf16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);
void launch_tc_spmm_tf32(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);
void launch_tc_spmm_f64(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);
// The wgmma kernel of wide tiles with row-major B (tc_wgmma_sm90a.cu): compute capability 9.0 only,
// and only in builds with SPARSETC_HAVE_WGMMA.
void launch_tc_wgmma_f16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);
void launch_tc_wgmma_bf16(const TcKernelParams& p, int64_t work_items, cudaStream_t stream);

}  // namespace sparsetc::detail::tc
