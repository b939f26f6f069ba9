// Canonical compressed arrays on the device (int64 pointers, int32 indices, zero-based) written in
// a caller's types: the device side of sparsetc_matrix_convert.
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "core/types.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace {

using gpuconv::ctas_for;
using gpuconv::kThreads;

template <typename From, typename To>
__global__ void rebase_kernel(const From* __restrict__ in, To* __restrict__ out, int64_t n, int64_t base) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = To(int64_t(in[i]) + base);
}

// out[i] = in[i] + base in the wanted integer width.
template <typename From>
void rebase(const From* in, int64_t n, sparsetc_index_type_t type, int64_t base, DeviceBuffer& out,
            const GpuContext& context) {
  out = DeviceBuffer(size_t(n) * (type == SPARSETC_INDEX_32 ? 4 : 8), context);
  if (n == 0) return;
  const unsigned ctas = ctas_for(n, int64_t(kThreads) * 8);
  if (type == SPARSETC_INDEX_32)
    rebase_kernel<<<ctas, kThreads, 0, context.stream>>>(in, out.as<int32_t>(), n, base);
  else
    rebase_kernel<<<ctas, kThreads, 0, context.stream>>>(in, out.as<int64_t>(), n, base);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
ExportedArrays gpu_export_compressed(int64_t outer, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                                     const V* values, sparsetc_index_type_t offset_type,
                                     sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                     sparsetc_value_type_t value_type, const GpuContext& context) {
  require(offset_type != SPARSETC_INDEX_32 || nnz + base <= INT32_MAX, SPARSETC_STATUS_SIZE_OVERFLOW, "nnz = ",
          nnz, " does not fit 32-bit offsets");
  ExportedArrays out;
  rebase(ptr, outer + 1, offset_type, base, out.offsets, context);
  rebase(idx, nnz, index_type, base, out.indices, context);
  out.values = DeviceBuffer(size_t(nnz) * value_size(value_type), context);
  const ValueConversion converted = gpu_convert_values(values, nnz, value_type, out.values.data(), context);
  if (converted.out_of_range > 0) value_out_of_range_error(values, converted.first_out_of_range, value_type, context.stream);
  return out;
}

template ExportedArrays gpu_export_compressed<float>(int64_t, int64_t, const int64_t*, const int32_t*, const float*,
                                                     sparsetc_index_type_t, sparsetc_index_type_t,
                                                     sparsetc_index_base_t, sparsetc_value_type_t,
                                                     const GpuContext&);
template ExportedArrays gpu_export_compressed<double>(int64_t, int64_t, const int64_t*, const int32_t*,
                                                      const double*, sparsetc_index_type_t, sparsetc_index_type_t,
                                                      sparsetc_index_base_t, sparsetc_value_type_t,
                                                      const GpuContext&);

}  // namespace sparsetc::detail
