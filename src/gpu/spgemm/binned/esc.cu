// Stage 3, group 4 (bins 33..36): bitonic ESC, one block per row, everything on chip (paper,
// section 4.1, Fig. 2): expand the row's u products, sort them with a bitonic network, compress
// equal columns.
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

namespace sparsetc::detail::binned {
namespace {

template <typename V, int CAPACITY, int THREADS>
struct EscShape {
  static constexpr int kItems = CAPACITY / THREADS;  // keys per thread in the compress step
  static constexpr int kWarps = THREADS / 32;
  static constexpr size_t kDynamicBytes = size_t(CAPACITY) * (sizeof(uint64_t) + sizeof(V));
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

template <typename V, int CAPACITY, int THREADS>
__global__ void __launch_bounds__(THREADS)
    esc_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, Temporary t,
               int64_t* __restrict__ count) {
  using Shape = EscShape<V, CAPACITY, THREADS>;
  using Scan = cubns::BlockScan<int64_t, THREADS>;
  extern __shared__ __align__(16) unsigned char dynamic[];
  uint64_t* keys = reinterpret_cast<uint64_t*>(dynamic);
  V* vals = reinterpret_cast<V*>(keys + CAPACITY);
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ int64_t entry_offset[THREADS], entry_b[THREADS];
  __shared__ int32_t entry_length[THREADS];
  __shared__ V entry_a[THREADS];

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t i = t.r0 + rows[blockIdx.x];
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);

  // Expand: A's entries a block at a time; a warp per entry copies its row of B (coalesced).
  int64_t products = 0;
  for (int64_t e0 = as; e0 < ae; e0 += THREADS) {
    const int64_t e = e0 + tid;
    int64_t length = 0;
    if (e < ae) {
      int64_t bs, be;
      row_of_b(b, __ldg(a.col_idx + e), bs, be);
      length = be - bs;
      entry_b[tid] = bs;
      entry_a[tid] = __ldg(a.values + e);
    }
    int64_t offset, chunk_total;
    Scan(scan_storage).ExclusiveSum(length, offset, chunk_total);
    entry_offset[tid] = products + offset;
    entry_length[tid] = int32_t(length);
    __syncthreads();
    const int entries = int(ae - e0 < THREADS ? ae - e0 : THREADS);
    for (int q = warp; q < entries; q += Shape::kWarps) {
      const int64_t first = entry_offset[q], bs = entry_b[q];
      const V av = entry_a[q];
      for (int l = lane; l < entry_length[q]; l += 32) {
        const int64_t p = first + l;
        keys[p] = (uint64_t(uint32_t(__ldg(b.col_idx + bs + l))) << 32) | uint64_t(p);
        vals[p] = product(av, __ldg(b.values + bs + l));
      }
    }
    products += chunk_total;
    __syncthreads();
  }
  const int n = int(max(next_pow2(products), int64_t(32 * Shape::kItems)));
  for (int p = int(products) + tid; p < n; p += THREADS) keys[p] = ~uint64_t(0);
  __syncthreads();
  bitonic_sort<CAPACITY, THREADS>(keys, n);
  __syncthreads();

  // Compress: heads of runs of equal columns, their output positions by a block scan, one thread
  // folds each run from its head.
  const int u = int(products);
  const int first = tid * Shape::kItems;
  int64_t heads = 0;
  for (int q = first; q < first + Shape::kItems && q < u; ++q)
    heads += (q == 0 || (keys[q] >> 32) != (keys[q - 1] >> 32)) ? 1 : 0;
  int64_t position, total;
  Scan(scan_storage).ExclusiveSum(heads, position, total);
  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  int32_t* cols = t.cols + out;
  V* out_vals = static_cast<V*>(t.vals) + out;
  for (int q = first; q < first + Shape::kItems && q < u; ++q) {
    const uint32_t col = uint32_t(keys[q] >> 32);
    if (q > 0 && uint32_t(keys[q - 1] >> 32) == col) continue;
    V value = V(0);
    int r = q;
    do {
      value = sum(value, vals[uint32_t(keys[r])]);
      ++r;
    } while (r < u && uint32_t(keys[r] >> 32) == col);
    cols[position] = int32_t(col);
    out_vals[position] = value;
    ++position;
  }
  if (tid == 0) count[i] = total;
}

template <typename V, int CAPACITY, int THREADS>
void launch_esc(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                const Temporary& t, int64_t* count, const GpuContext& context) {
  using Shape = EscShape<V, CAPACITY, THREADS>;
  auto kernel = esc_kernel<V, CAPACITY, THREADS>;
  // Static plus dynamic shared memory may pass 48 KB even where the dynamic part does not.
  SPARSETC_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(Shape::kDynamicBytes)));
  require(n <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " rows in one ESC launch");
  kernel<<<unsigned(n), THREADS, Shape::kDynamicBytes, context.stream>>>(a, b, rows, t, count);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
void esc_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
              int bin, const Temporary& t, int64_t* count, const GpuContext& context) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  static_assert(kEscBound[0] == 128 && kEscBound[1] == 512 && kEscBound[2] == 2048 && kEscBound[3] == 8192,
                "the ESC launches below follow bins.hpp");
  switch (bin - kFirstEscBin) {
    case 0: launch_esc<V, 128, 32>(a, b, rows + begin, n, t, count, context); break;   // 4 keys a thread
    case 1: launch_esc<V, 512, 64>(a, b, rows + begin, n, t, count, context); break;   // 8
    case 2: launch_esc<V, 2048, 128>(a, b, rows + begin, n, t, count, context); break;  // 16
    default: launch_esc<V, 8192, 512>(a, b, rows + begin, n, t, count, context); break;  // 16
  }
}

template void esc_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                              int64_t, int, const Temporary&, int64_t*, const GpuContext&);
template void esc_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*, int64_t,
                               int64_t, int, const Temporary&, int64_t*, const GpuContext&);

}  // namespace sparsetc::detail::binned
