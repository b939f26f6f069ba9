// Small device kernels of the harness: operand generation, L2 eviction, output checks and format
// helpers. Each launcher enqueues on `stream` and returns the launch's error (check with BENCH_CUDA).
#pragma once

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>

namespace bench {

// Dense rows x cols operand with entry (i, j) = dense_value(seed, i, j) rounded to `type`
// (f32, f16 or bf16), at out[i * ld + j] (row-major) or out[j * ld + i] (column-major).
cudaError_t launch_fill_dense(void* out, int64_t rows, int64_t cols, int64_t ld, bool row_major, cudaDataType type,
                              uint64_t seed, cudaStream_t stream);

// Reads `bytes` of `buffer` (at least twice the L2) so that nothing of the next run stays cached;
// the lines it leaves in L2 are clean, so evicting them costs the timed run no write-back.
cudaError_t launch_l2_flush(const void* buffer, size_t bytes, int* sink, cudaStream_t stream);

// Adds to *count (device memory) the entries of the rows x cols fp32 matrix that are NaN or Inf.
cudaError_t launch_count_nonfinite(const float* c, int64_t rows, int64_t cols, int64_t ld, bool row_major,
                                   unsigned long long* count, cudaStream_t stream);

// out[s * cols + j] = C(rows[s], j) for s < count: the sampled rows of an fp32 matrix, compacted.
cudaError_t launch_gather_rows(const float* c, int64_t cols, int64_t ld, bool row_major, const int64_t* rows,
                               int64_t count, float* out, cudaStream_t stream);

// Scatters a CSR matrix (int32 offsets and indices, values of `type`: f32, f16 or bf16) into a
// zeroed dense array of the same type, row-major (ld >= cols) or column-major (ld >= rows).
cudaError_t launch_densify(const int* row_ptr, const int* col, const void* values, cudaDataType type, int64_t rows,
                           int64_t ld, bool row_major, void* out, cudaStream_t stream);

// out[i] = (type) in[i]: fp32 to f16 or bf16, round to nearest.
cudaError_t launch_convert_values(const float* in, size_t count, void* out, cudaDataType type, cudaStream_t stream);

// Structure check of a whole CSR output (int32 offsets and indices, f32 or f64 values). Zeroes and
// fills counts[3] (device memory): [0] rows whose offsets decrease or leave [0, nnz], [1] entries
// whose column is out of range or not strictly increasing in its row, [2] non-finite values.
cudaError_t launch_check_csr(const int* row_ptr, const int* col, const void* values, cudaDataType type, int64_t rows,
                             int64_t cols, int64_t nnz, unsigned long long* counts, cudaStream_t stream);

}  // namespace bench
