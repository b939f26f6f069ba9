#include "csr_transfer.hpp"

#include <cstring>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"

namespace sparsetc::compat {
namespace {

constexpr int kThreads = 256;

unsigned ctas_for(int64_t n) {
  const int64_t ctas = (n + kThreads * 4 - 1) / (kThreads * 4);  // grid-stride: about 4 items a thread
  return unsigned(ctas < 1 ? 1 : ctas > 65535 * 8 ? 65535 * 8 : ctas);
}

template <typename From, typename To>
__global__ void __launch_bounds__(kThreads) rebase_kernel(const From* from, To* to, int64_t n, int64_t shift) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    to[i] = To(int64_t(from[i]) + shift);
}

template <typename From, typename To>
void rebase(const void* from, void* to, int64_t n, int64_t shift, cudaStream_t stream) {
  if (n <= 0) return;
  rebase_kernel<From, To><<<ctas_for(n), kThreads, 0, stream>>>(static_cast<const From*>(from), static_cast<To*>(to),
                                                               n, shift);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

void rebase_any(const void* from, sparsetc_index_type_t from_type, void* to, sparsetc_index_type_t to_type,
                int64_t n, int64_t shift, cudaStream_t stream) {
  const bool f32 = from_type == SPARSETC_INDEX_32, t32 = to_type == SPARSETC_INDEX_32;
  if (shift == 0 && from_type == to_type) {
    if (n > 0)
      SPARSETC_CUDA_CHECK(cudaMemcpyAsync(to, from, size_t(n) * (f32 ? 4 : 8), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  if (f32 && t32) rebase<int32_t, int32_t>(from, to, n, shift, stream);
  else if (f32) rebase<int32_t, int64_t>(from, to, n, shift, stream);
  else if (t32) rebase<int64_t, int32_t>(from, to, n, shift, stream);
  else rebase<int64_t, int64_t>(from, to, n, shift, stream);
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    combine_kernel(const V* from, V* to, int64_t n, V alpha, const V* alpha_device, V beta, const V* beta_device) {
  const V a = alpha_device ? *alpha_device : alpha;
  const V b = beta_device ? *beta_device : beta;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    to[i] = b == V(0) ? a * from[i] : a * from[i] + b * to[i];  // beta == 0: C is not read (NaN stays out)
}

template <typename V>
void combine(const void* from, void* to, int64_t n, Scalar alpha, Scalar beta, cudaStream_t stream) {
  V a = V(1), b = V(0);
  if (alpha.host) std::memcpy(&a, alpha.host, sizeof(V));
  if (beta.host) std::memcpy(&b, beta.host, sizeof(V));
  combine_kernel<V><<<ctas_for(n), kThreads, 0, stream>>>(static_cast<const V*>(from), static_cast<V*>(to), n, a,
                                                         static_cast<const V*>(alpha.device), b,
                                                         static_cast<const V*>(beta.device));
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

void transfer_pattern(const CsrArrays& from, const CsrArrays& to, int64_t rows, int64_t nnz, cudaStream_t stream) {
  detail::require(to.offsets != nullptr && (nnz == 0 || to.indices != nullptr), SPARSETC_STATUS_INVALID_VALUE,
                  "C's row offsets or column indices are NULL (set them with CsrSetPointers)");
  detail::require(to.offset_type == SPARSETC_INDEX_64 || nnz + to.base <= INT32_MAX, SPARSETC_STATUS_SIZE_OVERFLOW,
                  "nnz(C) = ", nnz, " does not fit C's 32-bit row offsets");
  const int64_t shift = to.base - from.base;
  rebase_any(from.offsets, from.offset_type, to.offsets, to.offset_type, rows + 1, shift, stream);
  rebase_any(from.indices, from.index_type, to.indices, to.index_type, nnz, shift, stream);
}

void transfer_values(sparsetc_value_type_t type, const void* from, void* to, int64_t nnz, Scalar alpha, Scalar beta,
                     cudaStream_t stream) {
  if (nnz <= 0) return;
  detail::require(to != nullptr, SPARSETC_STATUS_INVALID_VALUE, "C's values are NULL (set them with CsrSetPointers)");
  if (type == SPARSETC_VALUE_F64) combine<double>(from, to, nnz, alpha, beta, stream);
  else if (type == SPARSETC_VALUE_F32) combine<float>(from, to, nnz, alpha, beta, stream);
  else detail::fail(SPARSETC_STATUS_NOT_SUPPORTED, "SpGEMM values of type ", type);
}

}  // namespace sparsetc::compat
