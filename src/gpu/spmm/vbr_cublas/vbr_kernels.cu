// Gather, pointer fill and scatter kernels of the VBR multiply (see vbr_kernels.hpp). All are
// memory-bound copies: coalesced on both sides (the column-major gather transposes through shared
// memory, column_major_rows.cuh), 64-bit offsets throughout.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spmm/column_major_rows.cuh"
#include "gpu/spmm/vbr_cublas/vbr_kernels.hpp"

namespace sparsetc::detail::vbr {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGridY = 65535;

// B's row feeding gathered row r, or -1 past B's last row.
__device__ __forceinline__ int64_t source_row(const int32_t* block_col, int64_t r, int64_t width, int64_t k) {
  const int64_t s = int64_t(block_col[r / width]) * width + r % width;
  return s < k ? s : -1;
}

// Row-major B: one CTA column per gathered row, threads along the row (Word: 16-byte vectors
// when rows are aligned, else single elements).
template <typename Word>
__global__ void __launch_bounds__(kThreads)
    gather_rows_kernel(const Word* B, int64_t ldb_words, int64_t k, int64_t row_words, const int32_t* block_col,
                       int64_t rows, int64_t width, Word* out) {
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const int64_t s = source_row(block_col, r, width, k);
    Word* dst = out + r * row_words;
    const Word* src = s >= 0 ? B + s * ldb_words : nullptr;
    for (int64_t c = int64_t(blockIdx.x) * kThreads + threadIdx.x; c < row_words; c += int64_t(gridDim.x) * kThreads)
      dst[c] = src ? src[c] : Word{};
  }
}

// Column-major B's gathered rows (column_major_rows.cuh): row r is source_row(r), zeros past B.
struct BlockColumnRows {
  const int32_t* block_col;
  int64_t width, k;
  __device__ int64_t operator()(int64_t r) const { return source_row(block_col, r, width, k); }
};

template <typename Word>
void gather_rows(const void* B, int64_t ldb_words, int64_t k, int64_t row_words, const int32_t* block_col,
                 int64_t rows, int64_t width, void* out, cudaStream_t stream) {
  const int64_t x = std::max<int64_t>(1, std::min<int64_t>((row_words + kThreads - 1) / kThreads, 1024));
  const dim3 grid(unsigned(x), unsigned(std::min(rows, kMaxGridY)));
  gather_rows_kernel<Word><<<grid, kThreads, 0, stream>>>(static_cast<const Word*>(B), ldb_words, k, row_words,
                                                          block_col, rows, width, static_cast<Word*>(out));
  SPARSETC_CUDA_CHECK_LAUNCH();
}

__global__ void __launch_bounds__(kThreads)
    fill_pointers_kernel(const char* base, const int64_t* offsets, int64_t count, const void** out) {
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < count; i += int64_t(gridDim.x) * kThreads)
    out[i] = base + offsets[i];
}

template <typename Out, typename Acc>
__device__ __forceinline__ Out store_as(Acc v) {
  if constexpr (std::is_same_v<Out, __half>) {
    if constexpr (std::is_same_v<Acc, double>) return __double2half(v);
    else return __float2half_rn(v);
  } else if constexpr (std::is_same_v<Out, __nv_bfloat16>) {
    if constexpr (std::is_same_v<Acc, double>) return __double2bfloat16(v);
    else return __float2bfloat16_rn(v);
  } else {
    return Out(v);
  }
}

template <typename Acc>
__device__ __forceinline__ Acc load_as(__half v) { return Acc(__half2float(v)); }
template <typename Acc>
__device__ __forceinline__ Acc load_as(__nv_bfloat16 v) { return Acc(__bfloat162float(v)); }
template <typename Acc>
__device__ __forceinline__ Acc load_as(float v) { return Acc(v); }
template <typename Acc>
__device__ __forceinline__ Acc load_as(double v) { return Acc(v); }

// grid.y walks C's outer dimension (rows when row-major, columns when column-major), threads the
// inner one; W is in C's order, so both sides are read and written along their leading dimension.
template <typename Acc, typename Out, bool RowMajor>
__global__ void __launch_bounds__(kThreads)
    scatter_kernel(const Acc* W, int64_t ldw, const int64_t* source, int64_t m, int64_t n, Acc alpha, Acc beta,
                   Out* C, int64_t ldc) {
  const int64_t outer = RowMajor ? m : n, inner = RowMajor ? n : m;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    int64_t w_row = -1;
    if constexpr (RowMajor) w_row = alpha != Acc(0) ? source[o] : -1;
    for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < inner; i += int64_t(gridDim.x) * kThreads) {
      int64_t w_at, c_at;
      if constexpr (RowMajor) {
        w_at = w_row >= 0 ? w_row * ldw + i : -1;
        c_at = o * ldc + i;
      } else {
        const int64_t s = alpha != Acc(0) ? source[i] : -1;
        w_at = s >= 0 ? o * ldw + s : -1;
        c_at = o * ldc + i;
      }
      Acc v = w_at >= 0 ? alpha * W[w_at] : Acc(0);
      if (beta != Acc(0)) v += beta * load_as<Acc>(C[c_at]);
      C[c_at] = store_as<Out>(v);
    }
  }
}

template <typename Acc, typename Out>
void scatter_typed(const ScatterArgs& a, cudaStream_t stream) {
  const bool row_major = a.order == SPARSETC_ORDER_ROW;
  const int64_t outer = row_major ? a.m : a.n, inner = row_major ? a.n : a.m;
  const int64_t x = std::max<int64_t>(1, std::min<int64_t>((inner + kThreads - 1) / kThreads, 64));
  const dim3 grid(unsigned(x), unsigned(std::min(outer, kMaxGridY)));
  const Acc* W = static_cast<const Acc*>(a.W);
  Out* C = static_cast<Out*>(a.C);
  if (row_major)
    scatter_kernel<Acc, Out, true><<<grid, kThreads, 0, stream>>>(W, a.ldw, a.source, a.m, a.n, Acc(a.alpha),
                                                                  Acc(a.beta), C, a.ldc);
  else
    scatter_kernel<Acc, Out, false><<<grid, kThreads, 0, stream>>>(W, a.ldw, a.source, a.m, a.n, Acc(a.alpha),
                                                                   Acc(a.beta), C, a.ldc);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename Acc>
void scatter_to(const ScatterArgs& a, cudaStream_t stream) {
  switch (a.c_type) {
    case SPARSETC_VALUE_F16: return scatter_typed<Acc, __half>(a, stream);
    case SPARSETC_VALUE_BF16: return scatter_typed<Acc, __nv_bfloat16>(a, stream);
    case SPARSETC_VALUE_F32: return scatter_typed<Acc, float>(a, stream);
    case SPARSETC_VALUE_F64: return scatter_typed<Acc, double>(a, stream);
    default: fail(SPARSETC_STATUS_NOT_SUPPORTED, "VBR scatter: C of value type ", a.c_type);
  }
}

}  // namespace

void gather_block_rows(const void* B, sparsetc_order_t order, int64_t ldb, int64_t k, int64_t n, int element_bytes,
                       const int32_t* block_col, int64_t blocks, int64_t width, void* out, cudaStream_t stream) {
  const int64_t rows = blocks * width;
  if (rows == 0 || n == 0) return;
  if (order == SPARSETC_ORDER_COL) {
    const BlockColumnRows source{block_col, width, k};
    constexpr const char* kWhat = "VBR gather";
    switch (element_bytes) {
      case 2: return copy_column_major_rows<uint16_t>(B, ldb, n, source, rows, out, n, stream, kWhat);
      case 4: return copy_column_major_rows<uint32_t>(B, ldb, n, source, rows, out, n, stream, kWhat);
      default: return copy_column_major_rows<uint64_t>(B, ldb, n, source, rows, out, n, stream, kWhat);
    }
  }
  const int64_t row_bytes = n * element_bytes, ld_bytes = ldb * element_bytes;
  const bool vectors = row_bytes % 16 == 0 && ld_bytes % 16 == 0 && reinterpret_cast<uintptr_t>(B) % 16 == 0 &&
                       reinterpret_cast<uintptr_t>(out) % 16 == 0;
  if (vectors) return gather_rows<uint4>(B, ld_bytes / 16, k, row_bytes / 16, block_col, rows, width, out, stream);
  switch (element_bytes) {
    case 2: return gather_rows<uint16_t>(B, ldb, k, n, block_col, rows, width, out, stream);
    case 4: return gather_rows<uint32_t>(B, ldb, k, n, block_col, rows, width, out, stream);
    default: return gather_rows<uint64_t>(B, ldb, k, n, block_col, rows, width, out, stream);
  }
}

void fill_pointers(const void* base, const int64_t* byte_offsets, int64_t count, const void** out,
                   cudaStream_t stream) {
  if (count == 0) return;
  const int64_t ctas = std::min<int64_t>((count + kThreads - 1) / kThreads, 4096);
  fill_pointers_kernel<<<unsigned(ctas), kThreads, 0, stream>>>(static_cast<const char*>(base), byte_offsets, count,
                                                                out);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

void scatter_rows(const ScatterArgs& args, cudaStream_t stream) {
  if (args.m == 0 || args.n == 0) return;
  if (args.w_double) scatter_to<double>(args, stream);
  else scatter_to<float>(args, stream);
}

}  // namespace sparsetc::detail::vbr
