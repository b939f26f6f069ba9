// Structure statistics of a device CSR (sparsetc_analyze on the GPU backend): the same Analysis as
// cpu_analyze, computed on the device in one pass over the matrix, with the results copied back
// once (a synchronisation point on the context's stream).
//
// Agreement with the CPU engine: both produce the same AnalysisSums (cpu/cpu_kernels.hpp) and
// share analysis_from_sums, so every field that depends only on integers (all counts, row-length
// mean and std, density, fills, tile-density median/mean/std, strip mean) is bitwise identical.
// h_norm and ssf come from two double sums whose order (and libm) differ: they agree to about
// 1e-12 relative and are reproducible from run to run on one device.
#pragma once

#include <cstdint>

#include "cpu/cpu_kernels.hpp"
#include "gpu/convert/device_csr.hpp"
#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

// Statistics of A; products of A*B when B is not null (cols(A) must equal rows(B):
// DIMENSION_MISMATCH). strip_width as for cpu_analyze (0: kDefaultStripWidth; < 0: INVALID_VALUE).
// A (and B) must be valid canonical views: row offsets non-decreasing from 0 to nnz, columns
// sorted and unique within each row and below cols (what src/gpu/convert/ produces); they are not
// checked here.
template <typename V>
Analysis gpu_analyze(const DeviceCsrView<V>& A, const DeviceCsrView<V>* B, int64_t strip_width,
                     const GpuContext& context);

// Block rows (16 rows) with more entries than this take the CTA-per-block-row path (a long row is
// then spread over a CTA instead of one lane); the others the half-warp merge.
inline constexpr int64_t kGpuHeavyBlockRowEntries = 1024;

// The sums behind gpu_analyze; b_row_ptr (rows(B) + 1 offsets, B's rows being A's columns) may be
// null, and then products is -1. heavy_entries picks the path of each block row (tests force one
// path or the other with 0 and INT64_MAX; the results are the same).
AnalysisSums gpu_analysis_sums(int64_t rows, int64_t cols, int64_t nnz, const int64_t* row_ptr,
                               const int32_t* col_idx, const int64_t* b_row_ptr, int64_t strip_width,
                               const GpuContext& context, int64_t heavy_entries = kGpuHeavyBlockRowEntries);

}  // namespace sparsetc::detail
