// Moves a CSR product made by sparsetc into the caller's cuSPARSE descriptor arrays: the pattern
// in the caller's offset/index widths and base, and the values as alpha * product (+ beta * C).
// Stream-ordered; alpha and beta may live in host or device memory (the pointer mode).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "sparsetc/sparsetc_types.h"

namespace sparsetc::compat {

struct CsrArrays {
  void* offsets = nullptr;
  void* indices = nullptr;
  void* values = nullptr;
  sparsetc_index_type_t offset_type = SPARSETC_INDEX_32;
  sparsetc_index_type_t index_type = SPARSETC_INDEX_32;
  int64_t base = 0;
};

// A scalar of the values' type: *host, or *device read by the kernel (no synchronisation).
struct Scalar {
  const void* host = nullptr;
  const void* device = nullptr;
};

void transfer_pattern(const CsrArrays& from, const CsrArrays& to, int64_t rows, int64_t nnz, cudaStream_t stream);

// to[i] = alpha * from[i] (+ beta * to[i] when beta is given and not zero; C is not read otherwise).
void transfer_values(sparsetc_value_type_t type, const void* from, void* to, int64_t nnz, Scalar alpha,
                     Scalar beta, cudaStream_t stream);

}  // namespace sparsetc::compat
