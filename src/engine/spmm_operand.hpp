// op(A) of an SpMM problem as the canonical device CSR the device paths start from: A normalised
// (sorted, duplicates handled as the matrix says, 64-bit offsets) into V, transposed for op = T.
#pragma once

#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {

template <typename V>
DeviceCsr<V> multiplied_csr(const SpmmProblem& problem, const GpuContext& context) {
  DeviceCsr<V> csr = gpu_normalize<V>(problem.A->layout, problem.A->duplicates, context);
  if (problem.op == SPARSETC_OP_NON_TRANSPOSE) return csr;
  return as_transposed_csr(gpu_csr_to_csc<V>(csr.view(), context));
}

}  // namespace sparsetc::detail
