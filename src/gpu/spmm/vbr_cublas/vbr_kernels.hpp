// The three small kernels around the cuBLAS calls of the VBR multiply (host launchers; .cu inside):
// gathering the rows of B that a run of VBR blocks multiplies, filling pointer arrays from a base
// address, and writing the product back to C in the original row order with alpha and beta.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail::vbr {

// B (k x n, element_bytes wide, `order`, leading dimension ldb) -> out, row-major with ld n:
// gathered row r is B's row block_col[r / width] * width + r % width, or zeros past B's last row
// (the padding columns of the last column block). block_col points at the first gathered block.
void gather_block_rows(const void* B, sparsetc_order_t order, int64_t ldb, int64_t k, int64_t n, int element_bytes,
                       const int32_t* block_col, int64_t blocks, int64_t width, void* out, cudaStream_t stream);

// out[i] = (const char*)base + byte_offsets[i], for i < count.
void fill_pointers(const void* base, const int64_t* byte_offsets, int64_t count, const void** out,
                   cudaStream_t stream);

// C[i, :] = alpha * W[source[i], :] + beta * C[i, :] for the m rows of C, or beta * C[i, :] where
// source[i] < 0 (rows whose group has no block); beta == 0 never reads C and alpha == 0 never reads
// W (BLAS semantics: NaN in an operand scaled by zero does not propagate). W holds float (or
// double when w_double) in C's order, ld ldw; C any floating value type, ld ldc.
struct ScatterArgs {
  const void* W = nullptr;
  bool w_double = false;
  int64_t ldw = 0;
  const int64_t* source = nullptr;
  int64_t m = 0, n = 0;
  double alpha = 1, beta = 0;
  void* C = nullptr;
  sparsetc_value_type_t c_type = SPARSETC_VALUE_F32;
  sparsetc_order_t order = SPARSETC_ORDER_ROW;
  int64_t ldc = 0;
};
void scatter_rows(const ScatterArgs& args, cudaStream_t stream);

}  // namespace sparsetc::detail::vbr
