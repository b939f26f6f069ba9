// Row permutation (gather) on the device: row i of the result is row permutation[i].
//
// Two kernels. The first takes 2048 positions of the permutation per CTA: it checks them (a bitmap
// of the rows seen, atomicOr: a repeat finds its bit set; an out-of-range position by atomicMax of
// its complement), reads each row's start and length, scans the lengths into the new offsets in
// one pass (a block scan, then the sum of the CTAs before it by decoupled look-back,
// lookback_scan.cuh), writes each row's source start, and writes the merge-path corners that fall
// in its rows (a corner is a row whose end on the path crosses a multiple of the copy's tile). The
// second copies every entry (gather_segments_at, convert_common.cuh: rows are the segments), reading
// the starts and offsets in order. One read-back at the end (one sync); only when a repeat was seen
// do two more passes find the first repeated position, so the messages are the host's.
// (Measured on an H200, 12-14M entries: a CUB scan of the gathered lengths, a corner search kernel
// and the check in the copy took 0.175-0.204 ms, 37-45% of the bandwidth floor; this scheme
// 0.157-0.196 ms, 40-50%. The scan kernel takes 42 us of it under ncu on 1M rows, 62 before its
// loads and stores were coalesced: docs/performance.md.)
#include <cstdint>
#include <vector>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/convert/lookback_scan.cuh"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;

// The exact first repeat, on the error path only: first[p] = the smallest i with perm[i] = p,
// then bad[1] = the smallest i whose row appeared before.
struct FirstPosition {
  const int64_t* perm;
  int64_t rows;
  ull* first;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows) atomicMin(first + p, ull(i));
  }
};

struct FirstRepeat {
  const int64_t* perm;
  int64_t rows;
  const ull* first;
  ull* bad;
  __device__ void operator()(int64_t i) const {
    const int64_t p = perm[i];
    if (p >= 0 && p < rows && first[p] != ull(i)) atomicMin(bad + 1, ull(i));
  }
};

constexpr int kScanItems = 8;                                  // positions per thread
constexpr int64_t kScanRows = int64_t(kThreads) * kScanItems;  // positions per CTA

struct PermuteScanParams {
  const int64_t* perm;
  int64_t rows;
  const int64_t* row_ptr;
  int64_t* new_ptr;   // rows + 1
  int64_t* source;    // rows: where each new row starts in the input
  int64_t* corners;   // path_tiles + 1 (gather_segments_at)
  int64_t path_tiles;
  int64_t path_end;   // rows + nnz: the merge path's length
  uint32_t* seen;     // one bit per row, zeroed
  ull* bad;           // bad[0] = ~(first position out of range), bad[1] = a repeat seen; zeroed
  TilePrefixes prefixes;
};

// corner[t] for diagonal d = min(t * kGatherPath, path_end), given the rows whose path end is at
// most d. The bound below is the merge-path search's (merge_path_rows): it only acts where the
// lengths add up to more than nnz (a bad permutation, whose result is thrown away), and keeps the
// copy within its buffers there.
__device__ __forceinline__ void set_corner(const PermuteScanParams& p, int64_t t, int64_t rows_before) {
  const int64_t d = t < p.path_tiles ? t * kGatherPath : p.path_end;
  const int64_t least = d - (p.path_end - p.rows);
  p.corners[t] = rows_before > least ? rows_before : least;
}

// The corners of the copy's merge path that fall on row i: diagonals d in [lo, hi), where lo and
// hi are the path positions before and after row i (hi = its end + i + 1). The path ends rise
// strictly, so i rows end at or before exactly those diagonals; each corner is written once.
__device__ __forceinline__ void write_corners(const PermuteScanParams& p, int64_t i, int64_t lo, int64_t hi) {
  for (int64_t t = (lo + kGatherPath - 1) / kGatherPath; t < p.path_tiles && t * kGatherPath < hi; ++t)
    set_corner(p, t, i);
  if (lo <= p.path_end && p.path_end < hi) set_corner(p, p.path_tiles, i);
  if (i == p.rows - 1 && hi <= p.path_end) {  // diagonals past the last row's end
    for (int64_t t = (hi + kGatherPath - 1) / kGatherPath; t < p.path_tiles; ++t) set_corner(p, t, p.rows);
    set_corner(p, p.path_tiles, p.rows);
  }
}

__global__ void __launch_bounds__(kThreads) permute_scan_kernel(const PermuteScanParams p) {
  // The permutation is read and the new offsets and starts written warp-striped (coalesced) and
  // exchanged through shared memory into each thread's consecutive positions, which the scan needs:
  // by thread, 8 consecutive 8-byte items made 77% of the kernel's sectors excess (ncu).
  using BlockLoad = cubns::BlockLoad<int64_t, kThreads, kScanItems, cubns::BLOCK_LOAD_WARP_TRANSPOSE>;
  using BlockStore = cubns::BlockStore<int64_t, kThreads, kScanItems, cubns::BLOCK_STORE_WARP_TRANSPOSE>;
  using BlockScan = cubns::BlockScan<int64_t, kThreads>;
  __shared__ union {
    typename BlockLoad::TempStorage load;
    typename BlockScan::TempStorage scan;
    typename BlockStore::TempStorage store;
  } temp;
  __shared__ int64_t tile_prefix;
  const int64_t tile_first = int64_t(blockIdx.x) * kScanRows;
  const int valid = int(min(kScanRows, p.rows - tile_first));
  const int64_t first = tile_first + int64_t(threadIdx.x) * kScanItems;
  // Every load first, then every atomic, each batch in flight together: the kernel is a chain of
  // dependent round trips (position, row bounds, bitmap), and only 2048 positions a CTA.
  int64_t row[kScanItems], start[kScanItems], length[kScanItems];
  BlockLoad(temp.load).Load(p.perm + tile_first, row, valid, int64_t(0));
#pragma unroll
  for (int u = 0; u < kScanItems; ++u) {
    // An out-of-range row reads nothing (length 0); the result is thrown away then.
    const bool inside = first + u < p.rows && row[u] >= 0 && row[u] < p.rows;
    start[u] = inside ? __ldg(p.row_ptr + row[u]) : 0;
    length[u] = inside ? __ldg(p.row_ptr + row[u] + 1) - start[u] : 0;
  }
  uint32_t repeats = 0;
#pragma unroll
  for (int u = 0; u < kScanItems; ++u) {
    if (first + u >= p.rows) break;
    const int64_t r = row[u];
    if (r < 0 || r >= p.rows) {
      atomicMax(p.bad, ~ull(first + u));
    } else {
      const uint32_t bit = 1u << (r & 31);
      repeats |= atomicOr(p.seen + (r >> 5), bit) & bit;
    }
  }
  if (repeats) p.bad[1] = 1;
  __syncthreads();  // temp.load is done with
  int64_t end[kScanItems];  // exclusive sums first, then each new row's end
  int64_t sum;
  BlockScan(temp.scan).ExclusiveSum(length, end, sum);
  if (threadIdx.x < 32) {
    const int64_t prefix = p.prefixes.exclusive_prefix(blockIdx.x, sum);
    if (threadIdx.x == 0) tile_prefix = prefix;
  }
  __syncthreads();  // tile_prefix is set; temp.scan is done with
  if (blockIdx.x == 0 && threadIdx.x == 0) p.new_ptr[0] = 0;
  const int64_t base = tile_prefix;
#pragma unroll
  for (int u = 0; u < kScanItems; ++u) {
    const int64_t i = first + u;
    end[u] += base + length[u];
    if (i < p.rows) write_corners(p, i, end[u] - length[u] + i, end[u] + i + 1);
  }
  BlockStore(temp.store).Store(p.new_ptr + 1 + tile_first, end, valid);
  __syncthreads();  // temp.store is reused
  BlockStore(temp.store).Store(p.source + tile_first, start, valid);
}

// Row i of the result starts at input entry source[i].
struct SourceStart {
  const int64_t* source;
  __device__ int64_t operator()(int64_t i) const { return __ldg(source + i); }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const int64_t* d_permutation, const GpuContext& context) {
  using namespace gpuconv;
  const int64_t rows = csr.rows;
  require(d_permutation != nullptr || rows == 0, SPARSETC_STATUS_NULL_POINTER, "the permutation is NULL");
  DeviceCsr<V> out;
  out.rows = rows;
  out.cols = csr.cols;
  out.nnz = csr.nnz;
  out.row_ptr = buffer_of<int64_t>(rows + 1, context);
  out.col_idx = buffer_of<int32_t>(csr.nnz, context);
  out.values = buffer_of<V>(csr.nnz, context);
  int64_t* new_ptr = out.row_ptr.template as<int64_t>();
  // One temporary buffer. Zeroed at once: bad[0], ~(the first position out of range); bad[1], a
  // repeat seen; one bit per row; one look-back word per scan tile. Then the copy's corners and
  // each new row's source start.
  const int64_t scan_tiles = (rows + kScanRows - 1) / kScanRows;
  const int64_t path_tiles = (rows + csr.nnz + kGatherPath - 1) / kGatherPath;
  const int64_t seen_words = ((rows + 31) / 32 + 1) / 2;
  const int64_t zeroed = 2 + seen_words + scan_tiles;
  DeviceBuffer temp = buffer_of<ull>(zeroed + (rows > 0 ? path_tiles + 1 + rows : 0), context);
  ull* bad = temp.as<ull>();
  zero(bad, zeroed, context.stream);
  if (rows == 0) {
    zero(new_ptr, 1, context.stream);
  } else {
    PermuteScanParams p;
    p.perm = d_permutation;
    p.rows = rows;
    p.row_ptr = csr.row_ptr;
    p.new_ptr = new_ptr;
    p.corners = reinterpret_cast<int64_t*>(bad + zeroed);
    p.source = p.corners + path_tiles + 1;
    p.path_tiles = path_tiles;
    p.path_end = rows + csr.nnz;
    p.seen = reinterpret_cast<uint32_t*>(bad + 2);
    p.bad = bad;
    p.prefixes = TilePrefixes{bad + 2 + seen_words};
    permute_scan_kernel<<<ctas_for(rows, kScanRows), kThreads, 0, context.stream>>>(p);
    SPARSETC_CUDA_CHECK_LAUNCH();
    gather_segments_at(p.corners, new_ptr, rows, csr.nnz, SourceStart{p.source}, NoSegmentVisit{}, csr.col_idx,
                       csr.values, out.col_idx.template as<int32_t>(), out.values.template as<V>(), context);
  }
  ull found[2];
  copy_device_to_host(found, bad, sizeof found, context.stream);
  if (found[0] != 0) {
    const int64_t i = int64_t(~found[0]), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is out of range [0, ", rows,
         ")");
  }
  if (found[1] != 0) {  // the first repeat and its earlier position, as the host names them
    DeviceBuffer first = buffer_of<ull>(rows, context);
    ull* f = first.as<ull>();
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(f, 0xff, size_t(rows) * sizeof(ull), context.stream));
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(bad + 1, 0xff, sizeof(ull), context.stream));
    for_each_index(rows, context, FirstPosition{d_permutation, rows, f});
    for_each_index(rows, context, FirstRepeat{d_permutation, rows, f, bad});
    const int64_t i = int64_t(read_back(bad + 1, context.stream)), p = read_back(d_permutation + i, context.stream);
    fail(SPARSETC_STATUS_INVALID_VALUE, "permute_rows: permutation[", i, "] = ", p, " is repeated (also permutation[",
         int64_t(read_back(f + p, context.stream)), "])");
  }
  return out;
}

template <typename V>
DeviceCsr<V> gpu_permute_rows(const DeviceCsrView<V>& csr, const std::vector<int64_t>& permutation,
                              const GpuContext& context) {
  require(int64_t(permutation.size()) == csr.rows, SPARSETC_STATUS_INVALID_VALUE, "permute_rows: the permutation has ",
          permutation.size(), " entries for ", csr.rows, " rows (wrong length)");
  DeviceBuffer d_perm = gpuconv::buffer_of<int64_t>(csr.rows, context);
  copy_host_to_device(d_perm.data(), permutation.data(), permutation.size() * sizeof(int64_t), context.stream);
  return gpu_permute_rows(csr, d_perm.as<const int64_t>(), context);
}

template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const int64_t*, const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const int64_t*, const GpuContext&);
template DeviceCsr<float> gpu_permute_rows<float>(const DeviceCsrView<float>&, const std::vector<int64_t>&,
                                                  const GpuContext&);
template DeviceCsr<double> gpu_permute_rows<double>(const DeviceCsrView<double>&, const std::vector<int64_t>&,
                                                    const GpuContext&);

}  // namespace sparsetc::detail
