// Stage 3, group 4 (bins 33..36): ESC, one block per row, everything on chip (paper, section 4.1,
// Fig. 2): expand the row's u products, sort them, compress equal columns. The sort is the paper's
// bitonic network for bins 33 and 36; bins 34 and 35 sort with the stable merge tree over the rows
// of B (each already sorted): log2(runs) passes of n steps instead of log2(n)^2 / 2 network stages
// (5 passes against 55 stages for a 27-point stencil row), the Hopper re-derivation in
// docs/spgemm.md. Compress is the same for both.
//
// Sort keys are 64-bit (column << 32 | product number): distinct, so the unstable bitonic network
// leaves equal columns in product order (= order of A's entries), and each run is folded by one
// thread from its head: the canonical sum, with no scan over values. The values stay in product
// order; a key's low half finds its value. The network sorts n = the next power of two of the
// row's own u (at least one warp's worth), not the bin's capacity.
//
// The network runs in registers: each thread holds kItems consecutive keys. Stages whose partner
// is in the same thread compare registers, stages whose partner is in the same warp exchange by
// shuffles, and only the stages that cross warps go through shared memory (3 of the 55 stages of a
// 1024-key sort with 8 keys a thread), so the sort needs a handful of barriers instead of one a stage.
#include "gpu/spgemm/binned/device_common.cuh"
#include "gpu/spgemm/binned/merge_tree.cuh"

namespace sparsetc::detail::binned {
namespace {

// MERGE: sort by the stable merge tree of the rows of B (merge_tree.cuh) instead of the network.
template <typename V, int CAPACITY, int THREADS, bool MERGE>
struct EscShape {
  static constexpr int kItems = CAPACITY / THREADS;  // keys per thread in the sort and compress steps
  static constexpr int kWarps = THREADS / 32;
  // Bitonic: 64-bit keys and product values. Merge: columns and values twice (ping-pong), run starts.
  static constexpr size_t kDynamicBytes =
      MERGE ? 2 * size_t(CAPACITY) * (sizeof(int32_t) + sizeof(V)) + size_t(CAPACITY + 1) * sizeof(int32_t)
            : size_t(CAPACITY) * (sizeof(uint64_t) + sizeof(V));
};

__device__ __forceinline__ void order(uint64_t& x, uint64_t& y, bool ascending) {
  const uint64_t lo = x < y ? x : y, hi = x < y ? y : x;
  x = ascending ? lo : hi;
  y = ascending ? hi : lo;
}

// Sorts keys[0, n) ascending (n a power of two, 32 * kItems <= n <= CAPACITY); the threads whose
// keys lie beyond n (whole warps) only join the barriers. Leaves the result in shared memory.
template <int CAPACITY, int THREADS>
__device__ void bitonic_sort(uint64_t* keys, int n) {
  constexpr int kItems = CAPACITY / THREADS;
  constexpr int kWarpSpan = 32 * kItems;  // keys held by one warp
  const int tid = threadIdx.x, lane = tid & 31, first = tid * kItems;
  const bool active = first < n;
  uint64_t key[kItems];
  if (active) {
#pragma unroll
    for (int e = 0; e < kItems; ++e) key[e] = keys[first + e];
  }
  for (int k = 2; k <= n; k <<= 1) {
    int j = k >> 1;
    if (j >= kWarpSpan) {  // partners in other warps: through shared memory
      if (active) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) keys[first + e] = key[e];
      }
      __syncthreads();
      for (; j >= kWarpSpan; j >>= 1) {
        for (int q = tid; q < (n >> 1); q += THREADS) {
          const int lo = 2 * q - (q & (j - 1));
          order(keys[lo], keys[lo + j], (lo & k) == 0);
        }
        __syncthreads();
      }
      if (active) {
#pragma unroll
        for (int e = 0; e < kItems; ++e) key[e] = keys[first + e];
      }
    }
    if (!active) continue;
    for (; j >= kItems; j >>= 1) {  // partners in other lanes of the warp: shuffles
      const int lanes = j / kItems;
      const bool lower = (lane & lanes) == 0;
#pragma unroll
      for (int e = 0; e < kItems; ++e) {
        const uint64_t other = __shfl_xor_sync(kFullMask, key[e], lanes);
        const bool ascending = ((first + e) & k) == 0;
        const bool keep_small = lower == ascending;
        key[e] = keep_small ? (other < key[e] ? other : key[e]) : (other > key[e] ? other : key[e]);
      }
    }
#pragma unroll
    for (int jj = kItems / 2; jj > 0; jj >>= 1) {  // partners in the same thread: registers
      if (jj < k) {
#pragma unroll
        for (int e = 0; e < kItems; ++e)
          if ((e & jj) == 0) order(key[e], key[e | jj], ((first + e) & k) == 0);
      }
    }
  }
  if (active) {
#pragma unroll
    for (int e = 0; e < kItems; ++e) keys[first + e] = key[e];
  }
}

template <typename V, int CAPACITY, int THREADS, bool MERGE>
__global__ void __launch_bounds__(THREADS)
    esc_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, Temporary t,
               int64_t* __restrict__ count, const int32_t* __restrict__ listed, int64_t skip_up_to) {
  using Shape = EscShape<V, CAPACITY, THREADS, MERGE>;
  using Scan = cubns::BlockScan<int64_t, THREADS>;
  using RunScan = cubns::BlockScan<int32_t, THREADS>;
  extern __shared__ __align__(16) unsigned char dynamic[];
  // Bitonic layout.
  uint64_t* keys = reinterpret_cast<uint64_t*>(dynamic);
  V* vals = reinterpret_cast<V*>(keys + CAPACITY);
  // Merge layout: two buffers of columns, two of values (buffer r at + r * CAPACITY), run starts.
  int32_t* merge_cols = reinterpret_cast<int32_t*>(dynamic);
  V* merge_vals = reinterpret_cast<V*>(merge_cols + 2 * CAPACITY);
  int32_t* run_start = reinterpret_cast<int32_t*>(merge_vals + 2 * CAPACITY);
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ typename RunScan::TempStorage run_scan_storage;
  __shared__ int64_t entry_offset[THREADS], entry_b[THREADS];
  __shared__ int32_t entry_length[THREADS];
  __shared__ V entry_a[THREADS];

  if (listed != nullptr && int32_t(blockIdx.x) >= *listed) return;  // the whole block: before any barrier
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t i = t.r0 + rows[blockIdx.x];
  if (t.bound[i] <= skip_up_to) return;  // middle_rows' rows: the whole block
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);

  // Expand: A's entries a block at a time; a warp per entry copies its row of B (coalesced).
  int64_t products = 0;
  int runs = 0;
  for (int64_t e0 = as; e0 < ae; e0 += THREADS) {
    const EntryRun<V> run = entry_run(a, b, e0 + tid, ae);
    const int64_t length = run.length;
    if (e0 + tid < ae) {
      entry_b[tid] = run.start;
      entry_a[tid] = run.a;
    }
    int64_t offset, chunk_total;
    Scan(scan_storage).ExclusiveSum(length, offset, chunk_total);
    entry_offset[tid] = products + offset;
    entry_length[tid] = int32_t(length);
    if constexpr (MERGE) {  // one run per non-empty row of B, in the order of A's entries
      int32_t run, chunk_runs;
      RunScan(run_scan_storage).ExclusiveSum(length > 0 ? 1 : 0, run, chunk_runs);
      if (length > 0) run_start[runs + run] = int32_t(products + offset);
      runs += chunk_runs;
    }
    __syncthreads();
    const int entries = int(ae - e0 < THREADS ? ae - e0 : THREADS);
    for (int q = warp; q < entries; q += Shape::kWarps) {
      const int64_t first = entry_offset[q], bs = entry_b[q];
      const V av = entry_a[q];
      for (int l = lane; l < entry_length[q]; l += 32) {
        const int64_t p = first + l;
        const int32_t col = __ldg(b.col_idx + bs + l);
        const V value = product(av, __ldg(b.values + bs + l));
        if constexpr (MERGE) {
          merge_cols[p] = col;
          merge_vals[p] = value;
        } else {
          keys[p] = (uint64_t(uint32_t(col)) << 32) | uint64_t(p);
          vals[p] = value;
        }
      }
    }
    products += chunk_total;
    __syncthreads();
  }
  const int u = int(products);

  // Sort by column (equal columns in product order, i.e. the order of A's entries).
  const int32_t* sorted_cols = nullptr;
  const V* sorted_vals = nullptr;
  if constexpr (MERGE) {
    if (tid == 0) run_start[runs] = u;
    __syncthreads();
    const int src = merge_runs<THREADS, Shape::kItems>(merge_cols, merge_vals, CAPACITY, run_start, runs, u);
    sorted_cols = merge_cols + src * CAPACITY;
    sorted_vals = merge_vals + src * CAPACITY;
  } else {
    const int n = int(max(next_pow2(products), int64_t(32 * Shape::kItems)));
    for (int p = u + tid; p < n; p += THREADS) keys[p] = ~uint64_t(0);
    __syncthreads();
    bitonic_sort<CAPACITY, THREADS>(keys, n);
    __syncthreads();
  }
  auto column = [&](int q) -> int32_t {
    if constexpr (MERGE) return sorted_cols[q];
    else return int32_t(uint32_t(keys[q] >> 32));
  };
  auto value_at = [&](int q) -> V {
    if constexpr (MERGE) return sorted_vals[q];
    else return vals[uint32_t(keys[q])];
  };

  // Compress: heads of runs of equal columns, their output positions by a block scan, one thread
  // folds each run from its head.
  const int first = tid * Shape::kItems;
  int64_t heads = 0;
  for (int q = first; q < first + Shape::kItems && q < u; ++q) heads += (q == 0 || column(q) != column(q - 1)) ? 1 : 0;
  int64_t position, total;
  Scan(scan_storage).ExclusiveSum(heads, position, total);
  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  int32_t* cols = t.cols + out;
  V* out_vals = static_cast<V*>(t.vals) + out;
  for (int q = first; q < first + Shape::kItems && q < u; ++q) {
    const int32_t col = column(q);
    if (q > 0 && column(q - 1) == col) continue;
    V value = V(0);
    int r = q;
    do {
      value = sum(value, value_at(r));
      ++r;
    } while (r < u && column(r) == col);
    cols[position] = col;
    out_vals[position] = value;
    ++position;
  }
  if (tid == 0) count[i] = total;
}

template <typename V, int CAPACITY, int THREADS, bool MERGE>
void launch_esc(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                const Temporary& t, int64_t* count, const int32_t* listed, int64_t skip_up_to,
                const GpuContext& context) {
  using Shape = EscShape<V, CAPACITY, THREADS, MERGE>;
  auto kernel = esc_kernel<V, CAPACITY, THREADS, MERGE>;
  // Static plus dynamic shared memory may pass 48 KB even where the dynamic part does not.
  SPARSETC_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Shape::kDynamicBytes)));
  require(n <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " rows in one ESC launch");
  kernel<<<unsigned(n), THREADS, Shape::kDynamicBytes, context.stream>>>(a, b, rows, t, count, listed, skip_up_to);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
void esc_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
              int bin, const Temporary& t, int64_t* count, const GpuContext& context, const int32_t* listed,
              int64_t skip_up_to) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  static_assert(kEscBound[0] == 128 && kEscBound[1] == 512 && kEscBound[2] == 2048 && kEscBound[3] == 8192,
                "the ESC launches below follow bins.hpp");
  switch (bin - kFirstEscBin) {
    // Bitonic where a row is one warp's registers (bin 33) or too large for two copies on chip (bin 36);
    // the merge tree in between, where a row's few long sorted runs make it log2(runs) passes.
    case 0: launch_esc<V, 128, 32, false>(a, b, rows + begin, n, t, count, listed, skip_up_to, context); break;   // 4 keys a thread
    case 1: launch_esc<V, 512, 128, true>(a, b, rows + begin, n, t, count, listed, skip_up_to, context); break;   // 4
    case 2: launch_esc<V, 2048, 256, true>(a, b, rows + begin, n, t, count, listed, skip_up_to, context); break;  // 8
    default: launch_esc<V, 8192, 512, false>(a, b, rows + begin, n, t, count, listed, skip_up_to, context); break;  // 16
  }
}

template void esc_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                              int64_t, int, const Temporary&, int64_t*, const GpuContext&, const int32_t*, int64_t);
template void esc_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*, int64_t,
                               int64_t, int, const Temporary&, int64_t*, const GpuContext&, const int32_t*, int64_t);

}  // namespace sparsetc::detail::binned
