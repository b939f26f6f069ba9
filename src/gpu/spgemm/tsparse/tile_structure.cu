// C's CSR structure from its tile bitmaps (the one allocation of C, paper Algorithm 1 lines 16-17):
// row r = 8I + rr of C is byte rr of the bitmaps of tile row I's tiles, taken in column order, so
// its length is a sum of byte popcounts. One warp per tile row of C, its lanes on consecutive
// tiles (wide tile rows of graphs cost the same per tile as narrow ones): pass 1 reduces the eight
// row lengths, a CUB scan gives the offsets (one read back: nnz), pass 2 scans the byte counts
// across the warp, 32 tiles at a time, to give every tile and tile row the CSR position of its
// first entry (row_pos[tile * 8 + rr], where the multiplication kernels write) and writes the
// column indices.
#include "gpu/convert/convert_common.cuh"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

namespace sparsetc::detail {
namespace {

using gpuconv::kFullMask;
using gpuconv::kThreads;
constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ uint32_t byte_count(uint64_t bits, int rr) {
  return uint32_t(__popc(uint32_t(bits >> (8 * rr)) & 0xFFu));
}

__global__ void __launch_bounds__(kThreads)
    row_lengths_kernel(int64_t tile_rows, int64_t rows, const int64_t* __restrict__ tile_row_ptr,
                       const uint64_t* __restrict__ bitmap, int64_t* __restrict__ length) {
  const int lane = threadIdx.x & 31;
  for (int64_t i = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < tile_rows;
       i += int64_t(gridDim.x) * kWarps) {
    uint32_t count[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t t = tile_row_ptr[i] + lane, end = tile_row_ptr[i + 1]; t < end; t += 32) {
      const uint64_t bits = bitmap[t];
#pragma unroll
      for (int rr = 0; rr < 8; ++rr) count[rr] += byte_count(bits, rr);
    }
#pragma unroll
    for (int rr = 0; rr < 8; ++rr)
#pragma unroll
      for (int offset = 16; offset >= 1; offset >>= 1) count[rr] += __shfl_xor_sync(kFullMask, count[rr], offset);
    if (lane < 8 && i * 8 + lane < rows) {
      uint32_t mine = 0;
#pragma unroll
      for (int rr = 0; rr < 8; ++rr) mine = rr == lane ? count[rr] : mine;
      length[i * 8 + lane] = int64_t(mine);
    }
  }
}

__global__ void __launch_bounds__(kThreads)
    fill_rows_kernel(int64_t tile_rows, int64_t rows, const int64_t* __restrict__ tile_row_ptr,
                     const int32_t* __restrict__ tile_col, const uint64_t* __restrict__ bitmap,
                     const int64_t* __restrict__ row_ptr, int32_t* __restrict__ col_idx, int64_t* __restrict__ row_pos) {
  const int lane = threadIdx.x & 31;
  for (int64_t i = int64_t(blockIdx.x) * kWarps + (threadIdx.x >> 5); i < tile_rows;
       i += int64_t(gridDim.x) * kWarps) {
    int64_t next[8];  // CSR position of the next entry of each row of the tile row
#pragma unroll
    for (int rr = 0; rr < 8; ++rr) next[rr] = i * 8 + rr < rows ? row_ptr[i * 8 + rr] : 0;
    for (int64_t t0 = tile_row_ptr[i], end = tile_row_ptr[i + 1]; t0 < end; t0 += 32) {
      const int64_t t = t0 + lane;
      const uint64_t bits = t < end ? bitmap[t] : 0ull;
      const int32_t first = t < end ? tile_col[t] * 8 : 0;
#pragma unroll
      for (int rr = 0; rr < 8; ++rr) {
        const uint32_t count = byte_count(bits, rr);
        uint32_t inclusive = count;
#pragma unroll
        for (int offset = 1; offset < 32; offset <<= 1) {
          const uint32_t v = __shfl_up_sync(kFullMask, inclusive, offset);
          if (lane >= offset) inclusive += v;
        }
        int64_t pos = next[rr] + int64_t(inclusive - count);
        if (t < end) {
          row_pos[t * 8 + rr] = pos;
          uint32_t byte = uint32_t(bits >> (8 * rr)) & 0xFFu;
          while (byte) {
            col_idx[pos++] = first + __ffs(int(byte)) - 1;
            byte &= byte - 1;
          }
        }
        next[rr] += int64_t(__shfl_sync(kFullMask, inclusive, 31));
      }
    }
  }
}

unsigned grid_for(int64_t warps) {
  const int64_t ctas = (warps + kWarps - 1) / kWarps;
  return unsigned(ctas < 65536 * 4 ? (ctas > 0 ? ctas : 1) : 65536 * 4);
}

}  // namespace

TileCsrStructure make_tile_csr_structure(const TileTasks& tasks, const DeviceBuffer& bitmap,
                                         const GpuContext& context) {
  using namespace gpuconv;
  TileCsrStructure s;
  s.rows = tasks.rows;
  s.cols = tasks.cols;
  const int64_t tile_rows = tasks.tile_rows();
  s.row_ptr = buffer_of<int64_t>(s.rows + 1, context);
  s.row_pos = buffer_of<int64_t>(tasks.tiles * 8, context);
  DeviceBuffer length = buffer_of<int64_t>(s.rows, context);
  if (tile_rows > 0) {
    row_lengths_kernel<<<grid_for(tile_rows), kThreads, 0, context.stream>>>(
        tile_rows, s.rows, tasks.tile_row_ptr.as<const int64_t>(), bitmap.as<const uint64_t>(), length.as<int64_t>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  exclusive_scan_total(length.as<const int64_t>(), s.row_ptr.as<int64_t>(), s.rows, context);
  s.nnz = read_back(s.row_ptr.as<const int64_t>() + s.rows, context.stream);
  s.col_idx = buffer_of<int32_t>(s.nnz, context);
  if (tile_rows > 0 && tasks.tiles > 0) {
    fill_rows_kernel<<<grid_for(tile_rows), kThreads, 0, context.stream>>>(
        tile_rows, s.rows, tasks.tile_row_ptr.as<const int64_t>(), tasks.tile_col.as<const int32_t>(),
        bitmap.as<const uint64_t>(), s.row_ptr.as<const int64_t>(), s.col_idx.as<int32_t>(), s.row_pos.as<int64_t>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }
  return s;
}

}  // namespace sparsetc::detail
