// Stage 3, group 3 (bins 2..32): the heap method, one thread per row (paper, section 4.1, Fig. 1).
//
// The paper fills a heap with all u candidate products and drains it, fusing equal columns. The
// rows of B are already sorted, so this kernel keeps one heap node per row of B that the row of A
// meets (a k-way merge): the heap holds at most min(u, entries of A) nodes, not u, and each product
// is pushed once when its predecessor in the same row of B is popped. Equal columns pop in order
// of their entry of A (the key's tie-breaker), so each sum is the canonical left fold.
//
// Each row of B met gets a slot (in the order of A's entries) holding where it starts in B and the
// entry of A that scales it, so a pop reads only the product's value and the next column from B.
// Heap key (64 bits): column (32) | slot (5) | offset in the row of B (6) | its length (6); the
// offset and length fit because a heap row's u <= 32 bounds every row of B it meets. Heaps and
// slots live in shared memory, interleaved (node s of thread t at s * threads + t) so a warp's
// accesses hit distinct banks.
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

// 128 threads for heaps of up to 8 nodes, 64 for 16 and 32 (the static 48 KB in fp64).
template <int CAPACITY>
constexpr int heap_threads() {
  return CAPACITY <= 8 ? 128 : 64;
}

__device__ __forceinline__ uint64_t heap_key(int32_t col, int slot, int64_t b_off, int64_t b_length) {
  return (uint64_t(uint32_t(col)) << 32) | (uint64_t(slot) << 16) | (uint64_t(b_off) << 6) | uint64_t(b_length);
}

// The merged products of one row arrive in column order: equal columns are folded left to right
// from zero (the canonical sum) and each finished column is written once, in place in C~.
template <typename V>
struct RunWriter {
  int32_t* cols;
  V* vals;
  int64_t written = 0;
  int32_t current = -1;
  V value = V(0);

  __device__ __forceinline__ void add(int32_t col, V prod) {
    if (written > 0 && col == current) {
      value = sum(value, prod);
      return;
    }
    if (written > 0) {
      cols[written - 1] = current;
      vals[written - 1] = value;
    }
    current = col;
    value = sum(V(0), prod);
    ++written;
  }
  // Writes the last column; returns the row's length.
  __device__ __forceinline__ int64_t finish() {
    if (written > 0) {
      cols[written - 1] = current;
      vals[written - 1] = value;
    }
    return written;
  }
};

template <typename V, int CAPACITY>
__global__ void __launch_bounds__(heap_threads<CAPACITY>())
    heap_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n, Temporary t,
                int64_t* __restrict__ count) {
  constexpr int kThreads = heap_threads<CAPACITY>();
  __shared__ uint64_t heap_storage[CAPACITY * kThreads];
  __shared__ int64_t start_storage[CAPACITY * kThreads];
  __shared__ V scale_storage[CAPACITY * kThreads];
  const int64_t j = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (j >= n) return;
  uint64_t* heap = heap_storage + threadIdx.x;
  int64_t* start = start_storage + threadIdx.x;
  V* scale = scale_storage + threadIdx.x;
  auto node = [heap](int s) -> uint64_t& { return heap[s * kThreads]; };

  const int64_t i = t.r0 + rows[j];
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
  int size = 0;
  for (int64_t p = as; p < ae; ++p) {  // a slot and the first product of every non-empty row of B met
    int64_t bs, be;
    row_of_b(b, __ldg(a.col_idx + p), bs, be);
    if (bs == be) continue;
    const int slot = size;
    start[slot * kThreads] = bs;
    scale[slot * kThreads] = __ldg(a.values + p);
    const uint64_t key = heap_key(__ldg(b.col_idx + bs), slot, 0, be - bs);
    int pos = size++;
    while (pos > 0) {
      const int parent = (pos - 1) >> 1;
      if (node(parent) <= key) break;
      node(pos) = node(parent);
      pos = parent;
    }
    node(pos) = key;
  }

  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  RunWriter<V> writer{t.cols + out, static_cast<V*>(t.vals) + out};
  while (size > 0) {
    const uint64_t top = node(0);
    const int32_t col = int32_t(top >> 32);
    const int slot = int((top >> 16) & 31);
    const int64_t b_off = int64_t((top >> 6) & 63), b_length = int64_t(top & 63);
    const int64_t bs = start[slot * kThreads];
    const V prod = product(scale[slot * kThreads], __ldg(b.values + bs + b_off));
    writer.add(col, prod);
    // Replace the root by the next product of the same row of B, or by the last node.
    uint64_t key;
    if (b_off + 1 < b_length) key = heap_key(__ldg(b.col_idx + bs + b_off + 1), slot, b_off + 1, b_length);
    else key = node(--size);
    int pos = 0;
    for (;;) {
      int child = 2 * pos + 1;
      if (child >= size) break;
      uint64_t c = node(child);
      if (child + 1 < size) {
        const uint64_t c2 = node(child + 1);
        if (c2 < c) {
          c = c2;
          ++child;
        }
      }
      if (key <= c) break;
      node(pos) = c;
      pos = child;
    }
    if (size > 0) node(pos) = key;
  }
  count[i] = writer.finish();
}

// The same k-way merge with its queue in registers, for heaps of at most NODES (4 or 8) nodes: the
// queue is the rows of B met, in slots in the order of A's entries, each with its next column and
// product, and a pop takes the smallest column by a linear scan (lowest slot on ties: the canonical
// fold, bit for bit the heap's). No shared memory, so the L1 caches the rows of B that neighbouring
// rows of A share: the shared-memory heaps left it 4% of hits on the 2D Poisson stencil (ncu, H200).
// Register arrays are only ever indexed by unrolled constants (selects), so they stay in registers.
// (Bounding the registers for more occupancy, with 32-bit positions, measured no faster: 39%
// against 28% occupancy, the same 0.6 ms on the 2D Poisson stencil: the warps' scattered loads of
// B, a row a thread, set the pace.)
template <typename V, int NODES>
__global__ void __launch_bounds__(128)
    register_merge_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, const int32_t* __restrict__ rows, int64_t n,
                          Temporary t, int64_t* __restrict__ count) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  constexpr int32_t kDone = 0x7fffffff;  // above every column (B has at most 2^31 - 1 columns)
  int32_t col[NODES];
  int64_t next[NODES];  // position in B of the entry after the one in col
  int64_t stop[NODES];  // end of the row of B
  V scale[NODES], prod[NODES];
#pragma unroll
  for (int s = 0; s < NODES; ++s) {
    col[s] = kDone;
    next[s] = stop[s] = 0;
    scale[s] = prod[s] = V(0);
  }
  const int64_t i = t.r0 + rows[j];
  const int64_t as = __ldg(a.row_ptr + i), ae = __ldg(a.row_ptr + i + 1);
  int size = 0;
  for (int64_t p = as; p < ae; ++p) {
    const EntryRun<V> run = entry_run(a, b, p, ae);
    if (run.length == 0) continue;
    const int32_t first_col = __ldg(b.col_idx + run.start);
    const V first = product(run.a, __ldg(b.values + run.start));
#pragma unroll
    for (int s = 0; s < NODES; ++s)
      if (s == size) {
        col[s] = first_col;
        prod[s] = first;
        scale[s] = run.a;
        next[s] = run.start + 1;
        stop[s] = run.start + run.length;
      }
    ++size;
  }

  const int64_t out = t.cap_scan[i] - t.cap_scan[t.r0];
  RunWriter<V> writer{t.cols + out, static_cast<V*>(t.vals) + out};
  for (;;) {
    int32_t best = col[0];
    int slot = 0;
#pragma unroll
    for (int s = 1; s < NODES; ++s)
      if (col[s] < best) {
        best = col[s];
        slot = s;
      }
    if (best == kDone) break;
    V p = prod[0], sc = scale[0];
    int64_t at = next[0], end = stop[0];
#pragma unroll
    for (int s = 1; s < NODES; ++s)
      if (s == slot) {
        p = prod[s];
        sc = scale[s];
        at = next[s];
        end = stop[s];
      }
    writer.add(best, p);
    int32_t follow = kDone;
    V follow_prod = V(0);
    if (at < end) {
      follow = __ldg(b.col_idx + at);
      follow_prod = product(sc, __ldg(b.values + at));
    }
#pragma unroll
    for (int s = 0; s < NODES; ++s)
      if (s == slot) {
        col[s] = follow;
        prod[s] = follow_prod;
        next[s] = at + 1;
      }
  }
  count[i] = writer.finish();
}

template <typename V, int CAPACITY>
void launch_heap(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                 const Temporary& t, int64_t* count, const GpuContext& context) {
  constexpr int kThreads = heap_threads<CAPACITY>();
  heap_kernel<V, CAPACITY><<<ctas_for(n, kThreads), kThreads, 0, context.stream>>>(a, b, rows, n, t, count);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V, int NODES>
void launch_register_merge(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t n,
                           const Temporary& t, int64_t* count, const GpuContext& context) {
  register_merge_kernel<V, NODES><<<ctas_for(n, 128), 128, 0, context.stream>>>(a, b, rows, n, t, count);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <typename V>
void heap_rows(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, const int32_t* rows, int64_t begin, int64_t end,
               int heap_capacity, bool queue_in_registers, const Temporary& t, int64_t* count,
               const GpuContext& context) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  if (queue_in_registers && heap_capacity <= 8) {
    if (heap_capacity <= 4) launch_register_merge<V, 4>(a, b, rows + begin, n, t, count, context);
    else launch_register_merge<V, 8>(a, b, rows + begin, n, t, count, context);
    return;
  }
  switch (heap_capacity) {
    case 4: launch_heap<V, 4>(a, b, rows + begin, n, t, count, context); break;
    case 8: launch_heap<V, 8>(a, b, rows + begin, n, t, count, context); break;
    case 16: launch_heap<V, 16>(a, b, rows + begin, n, t, count, context); break;
    default: launch_heap<V, 32>(a, b, rows + begin, n, t, count, context); break;
  }
}

template void heap_rows<float>(const DeviceCsrView<float>&, const DeviceCsrView<float>&, const int32_t*, int64_t,
                               int64_t, int, bool, const Temporary&, int64_t*, const GpuContext&);
template void heap_rows<double>(const DeviceCsrView<double>&, const DeviceCsrView<double>&, const int32_t*, int64_t,
                                int64_t, int, bool, const Temporary&, int64_t*, const GpuContext&);

}  // namespace sparsetc::detail::binned
