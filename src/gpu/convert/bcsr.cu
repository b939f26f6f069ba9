// CSR -> BCSR (dense h x w blocks) on the device.
//
// find_block_columns gives each block row's column blocks (block_row_ptr, block_col). The values
// are then written run by run (block_chunks.cuh): one CTA per run of consecutive blocks (32 KB of
// values, e.g. 32 blocks of 16x8 doubles) zeroes them in shared memory, drops in their entries and
// writes the run with 16-byte stores, so the padded value array, the bulk of the output, is
// written once, coalesced.
#include <algorithm>
#include <cstdint>

#include "gpu/convert/block_chunks.cuh"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int kStageBytes = 32 * 1024;
constexpr int kMaxChunk = 1024;

template <typename V>
struct BlockValues {
  const V* values;
  V* out;
  int area, width;
  bool vector_store;
  __device__ __host__ int shared_bytes(int chunk) const { return (chunk * area * int(sizeof(V)) + 15) / 16 * 16; }
  __device__ int words(int n) const { return (n * area * int(sizeof(V)) + 15) / 16; }
  __device__ void begin(uint4* stage, int64_t, int n) const {
    for (int i = threadIdx.x; i < words(n); i += kThreads) stage[i] = make_uint4(0, 0, 0, 0);
  }
  __device__ void entry(uint4* stage, int b, int rr, int cc, int64_t k) const {
    reinterpret_cast<V*>(stage)[b * area + rr * width + cc] = values[k];
  }
  __device__ void end(uint4* stage, int64_t b0, int n) const {
    if (vector_store) {
      uint4* d = reinterpret_cast<uint4*>(out + b0 * area);
      for (int i = threadIdx.x; i < words(n); i += kThreads) __stcs(d + i, stage[i]);
    } else {
      V* d = out + b0 * area;
      const V* s = reinterpret_cast<const V*>(stage);
      for (int i = threadIdx.x; i < n * area; i += kThreads) d[i] = s[i];
    }
  }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceBcsr<V> gpu_csr_to_bcsr(const DeviceCsrView<V>& csr, int block_height, int block_width,
                              const GpuContext& context) {
  using namespace gpuconv;
  require(block_height >= 1 && block_height <= 32 && block_width >= 1 && block_height * int64_t(block_width) <= 1024,
          SPARSETC_STATUS_INVALID_VALUE, "unsupported block shape ", block_height, "x", block_width,
          " (1 <= h <= 32, h * w <= 1024)");
  DeviceBcsr<V> bcsr;
  bcsr.rows = csr.rows;
  bcsr.cols = csr.cols;
  bcsr.block_height = block_height;
  bcsr.block_width = block_width;
  const int64_t block_rows = bcsr.block_rows();
  BlockColumns b = find_block_columns(csr.row_ptr, csr.col_idx, csr.rows, csr.cols, csr.nnz, block_height, nullptr,
                                      block_rows, block_height, block_width, false, context);
  bcsr.blocks = b.blocks;
  bcsr.block_row_ptr = std::move(b.block_ptr);
  bcsr.block_col = std::move(b.block_col);
  const int area = block_height * block_width;
  bcsr.values = buffer_of<V>(b.blocks * area, context);
  const int chunk = int(std::clamp<int64_t>(kStageBytes / (int64_t(area) * int64_t(sizeof(V))), 1, kMaxChunk));
  const BlockValues<V> op{csr.values, bcsr.values.template as<V>(), area, block_width,
                          (size_t(area) * sizeof(V)) % 16 == 0};
  launch_block_chunks(csr.row_ptr, csr.col_idx, csr.rows, block_height, block_width, block_rows,
                      bcsr.block_row_ptr.template as<const int64_t>(), bcsr.block_col.template as<const int32_t>(),
                      b.blocks, chunk, op, context);
  return bcsr;
}

template DeviceBcsr<float> gpu_csr_to_bcsr<float>(const DeviceCsrView<float>&, int, int, const GpuContext&);
template DeviceBcsr<double> gpu_csr_to_bcsr<double>(const DeviceCsrView<double>&, int, int, const GpuContext&);

}  // namespace sparsetc::detail
