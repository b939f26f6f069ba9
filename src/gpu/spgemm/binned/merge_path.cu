// Stage 3, group 5 (bin 37, u > 8192): merge path with the progressive scheme (paper, section 4.1,
// Figs. 3 and 4), one block per row.
//
// The row's result (sorted, duplicate-free) grows as the products stream in, in the order of A's
// entries. The paper merges one row of B at a time; here a batch takes up to kBatch products of up
// to kThreads consecutive entries of A (so rows of A with thousands of short rows of B do not cost
// thousands of block-wide steps), and a batch's rows of B, each sorted, are merged pairwise by a
// stable merge-path tree in shared memory (equal columns stay in the order of A's entries). Then:
//  1. heads of equal-column runs look their column up in the result (galloping binary search);
//  2. a block scan numbers the new columns; if they do not fit the row's global region, the row
//     checkpoints (the paper: "records current computation position as a checkpoint and dumps the
//     resulting sequence"), the host grows its region 2x into a new arena and relaunches it;
//  3. each head folds its run onto the result's value (existing column) or from zero (new one):
//     the canonical left fold, since earlier batches hold only earlier entries of A;
//  4. the new columns are merged into the result in place, from the back, in tiles whose merge-path
//     inputs are loaded to registers before any of the tile is written (a position is only written
//     after every read of it); only the suffix from the first new column's place moves.
// The result lives in shared memory while it fits (result_shared() entries). Beyond, as in the paper,
// it becomes the level-2 sequence in the row's global region and shared memory holds a level-1
// sequence of the columns new since the last flush: lookups try level 2, then level 1 (a column is
// in at most one of them, so folds stay canonical), new columns merge into level 1, and level 1 is
// merged into level 2 only when it is full - one pass over the long global sequence per
// result_shared() - kBatch new columns instead of one per batch. So no row is ever too long.
#include "gpu/spgemm/binned/device_common.cuh"
#include "gpu/spgemm/binned/merge_tree.cuh"

namespace sparsetc::detail::binned {
namespace {

constexpr int kThreads = 256;
constexpr int kBatch = 1024;               // products per batch
constexpr int kItems = kBatch / kThreads;  // products per thread in the tree and compress steps
constexpr int kMergeItems = 4;             // outputs per thread per tile of the in-place merge

// Result entries kept in shared memory: 32 KB of them, plus 8 KB of batch columns, 8 or 16 KB of
// batch values and 4-5 KB of runs: four blocks (1024 threads) per SM in fp32 and fp64.
template <typename V>
constexpr int result_shared() {
  return int(merge_dense_columns(sizeof(V)));
}

template <typename V>
struct MergeShared {
  static constexpr int kResult = result_shared<V>();
  int32_t keys[2][kBatch];  // the batch's columns, ping-pong through the tree
  V vals[2][kBatch];
  int32_t result_cols[kResult];  // the result, or the level-1 sequence
  V result_vals[kResult];
  int32_t run_start[kThreads + 1];  // the batch's runs (one per entry of A), starts in the batch
  int64_t run_b[kThreads];          // where each run starts in B
  V run_a[kThreads];                // the entry of A that scales it
  typename cubns::BlockScan<int64_t, kThreads>::TempStorage scan;
  int64_t next_a, next_b_off, first_moved;
  ColumnSpan window;             // the row's column window (dense mode)
};

template <typename V>
__device__ void copy_entries(const int32_t* from_cols, const V* from_vals, int32_t* to_cols, V* to_vals, int64_t n) {
  for (int64_t q = threadIdx.x; q < n; q += kThreads) {
    to_cols[q] = from_cols[q];
    to_vals[q] = from_vals[q];
  }
}

// The first position >= from of sorted cols[0, length) whose column is >= key, galloping from
// `from` (every position before it is known to hold a smaller column).
__device__ __forceinline__ int64_t gallop(const int32_t* cols, int64_t length, int32_t key, int64_t from) {
  int64_t lo = from, hi = from, step = 1;
  while (hi < length && cols[hi] < key) {
    lo = hi + 1;
    hi += step;
    step <<= 1;
  }
  if (hi > length) hi = length;
  while (lo < hi) {
    const int64_t mid = (lo + hi) >> 1;
    if (cols[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Merges the n sorted entries (new_cols, new_vals), whose columns are not in cols[0, length), into
// cols/vals in place (they have room for length + n). Whole block; ends with a barrier.
template <typename V>
__device__ void merge_in_place(int32_t* cols, V* vals, int64_t length, const int32_t* new_cols, const V* new_vals,
                               int64_t n, int64_t& first_moved) {
  if (n == 0) return;
  if (threadIdx.x == 0) first_moved = lower_bound_in(static_cast<const int32_t*>(cols), length, new_cols[0]);
  __syncthreads();
  const int64_t floor = first_moved;
  int64_t hi = length + n;
  while (hi > floor) {
    const int64_t lo = hi - int64_t(kThreads) * kMergeItems > floor ? hi - int64_t(kThreads) * kMergeItems : floor;
    const int64_t o0 = lo + int64_t(threadIdx.x) * kMergeItems;
    int32_t c[kMergeItems];
    V v[kMergeItems];
    if (o0 < hi) {
      int64_t xlo = o0 - n > 0 ? o0 - n : 0, xhi = o0 < length ? o0 : length;
      while (xlo < xhi) {
        const int64_t m = (xlo + xhi) >> 1;
        if (cols[m] < new_cols[o0 - 1 - m]) xlo = m + 1;
        else xhi = m;
      }
      int64_t x = xlo, y = o0 - xlo;
#pragma unroll
      for (int it = 0; it < kMergeItems; ++it) {
        if (o0 + it < hi) {
          const bool old = x < length && (y >= n || cols[x] < new_cols[y]);
          c[it] = old ? cols[x] : new_cols[y];
          v[it] = old ? vals[x] : new_vals[y];
          if (old) ++x;
          else ++y;
        }
      }
    }
    __syncthreads();
    if (o0 < hi) {
#pragma unroll
      for (int it = 0; it < kMergeItems; ++it) {
        if (o0 + it < hi) {
          cols[o0 + it] = c[it];
          vals[o0 + it] = v[it];
        }
      }
    }
    __syncthreads();
    hi = lo;
  }
}

// Dense mode, for a fresh row whose columns all fall in a window of at most result_shared() columns
// and whose rows of B are long (the band and stencil case: few wide runs, a small result): the
// result is a dense window in shared memory, the runs are added one after the other (a run's
// columns are distinct, so its products land on distinct entries; a barrier between runs keeps each
// entry's fold in the order of A's entries, from zero: the canonical fold), and the touched
// entries are compacted, already sorted, into the row's region. Returns the row's length.
template <typename V>
__device__ int64_t dense_row(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t a_pos, int64_t a_end,
                             int32_t lo, int width, MergeShared<V>& s, int32_t* out_cols, V* out_vals) {
  using Scan = cubns::BlockScan<int64_t, kThreads>;
  constexpr int kResult = MergeShared<V>::kResult;
  constexpr int kWindowItems = kResult / kThreads;
  int32_t* touched = s.result_cols;
  V* acc = s.result_vals;
  for (int q = threadIdx.x; q < width; q += kThreads) {
    touched[q] = 0;
    acc[q] = V(0);
  }
  for (int64_t e0 = a_pos; e0 < a_end; e0 += kThreads) {
    __syncthreads();  // the previous chunk's runs are done with s.run_*
    const int64_t e = e0 + threadIdx.x;
    if (e < a_end) {
      int64_t bs, be;
      row_of_b(b, __ldg(a.col_idx + e), bs, be);
      s.run_b[threadIdx.x] = bs;
      s.run_start[threadIdx.x] = int32_t(be - bs);
      s.run_a[threadIdx.x] = __ldg(a.values + e);
    }
    __syncthreads();
    const int entries = int(a_end - e0 < kThreads ? a_end - e0 : kThreads);
    for (int r = 0; r < entries; ++r) {
      const int64_t bs = s.run_b[r];
      const int length = s.run_start[r];
      const V av = s.run_a[r];
      for (int q = threadIdx.x; q < length; q += kThreads) {
        const int c = __ldg(b.col_idx + bs + q) - lo;
        acc[c] = sum(acc[c], product(av, __ldg(b.values + bs + q)));
        touched[c] = 1;
      }
      __syncthreads();
    }
  }
  __syncthreads();
  const int first = int(threadIdx.x) * kWindowItems;
  int64_t mine = 0;
#pragma unroll
  for (int it = 0; it < kWindowItems; ++it)
    if (first + it < width) mine += touched[first + it];
  int64_t position, total;
  Scan(s.scan).ExclusiveSum(mine, position, total);
#pragma unroll
  for (int it = 0; it < kWindowItems; ++it) {
    const int q = first + it;
    if (q < width && touched[q]) {
      out_cols[position] = lo + q;
      out_vals[position] = acc[q];
      ++position;
    }
  }
  return total;
}

template <typename V>
__global__ void __launch_bounds__(kThreads, 4)
    merge_kernel(DeviceCsrView<V> a, DeviceCsrView<V> b, MergeRow<V>* states, const int32_t* __restrict__ list,
                 int32_t* __restrict__ overflow, int32_t* __restrict__ overflow_count, int64_t* __restrict__ count,
                 bool dense_ok) {
  using Scan = cubns::BlockScan<int64_t, kThreads>;
  constexpr int kResult = MergeShared<V>::kResult;
  extern __shared__ __align__(16) unsigned char dynamic[];
  MergeShared<V>& s = *reinterpret_cast<MergeShared<V>*>(dynamic);
  const int tid = threadIdx.x;
  const int32_t index = list[blockIdx.x];
  MergeRow<V>& state = states[index];
  const int64_t row = state.row, capacity = state.capacity;
  const int64_t a_end = __ldg(a.row_ptr + row + 1);
  int64_t a_pos = state.a_pos, b_off = state.b_off;
  if (state.waiting || a_pos >= a_end) return;  // done (or to be redone) in a global dense window
  int32_t* const global_cols = state.cols;
  V* const global_vals = state.vals;
  // A fresh row with a narrow column window and long rows of B: dense mode.
  if (dense_ok && state.length == 0 && b_off == 0 && a_pos == __ldg(a.row_ptr + row)) {
    const ColumnSpan span = block_column_span(a, b, a_pos, a_end, s.window);
    const int64_t width = span.width();
    if (width <= kResult && width <= capacity && (a_end - a_pos) * 32 <= state.bound) {
      const int64_t length = dense_row(a, b, a_pos, a_end, span.lo, int(width), s, global_cols, global_vals);
      if (tid == 0) {
        state.a_pos = a_end;
        state.length = length;
        count[row] = length;
      }
      return;
    }
    __syncthreads();  // everyone has read the window before shared memory is reused
  }

  // Shared mode: the result is s.result_*[0, length). Two-level mode: level 2 is the global region
  // [0, length), level 1 is s.result_*[0, level1).
  int64_t length = state.length, level1 = 0;
  bool two_level = length > kResult;
  if (!two_level) copy_entries(global_cols, global_vals, s.result_cols, s.result_vals, length);
  __syncthreads();
  auto flush = [&] {  // level 1 into level 2
    merge_in_place(global_cols, global_vals, length, s.result_cols, s.result_vals, level1, s.first_moved);
    length += level1;
    level1 = 0;
  };

  while (a_pos < a_end) {
    if (two_level && level1 + kBatch > kResult) flush();  // room for this batch's new columns

    // ---- The batch: up to kThreads entries of A from the resume point, up to kBatch products.
    const int64_t e = a_pos + tid;
    int64_t length_b = 0, bs = 0;
    V av = V(0);
    if (e < a_end) {
      int64_t be;
      row_of_b(b, __ldg(a.col_idx + e), bs, be);
      if (tid == 0) bs += b_off;
      length_b = be - bs;
      av = __ldg(a.values + e);
    }
    int64_t offset, chunk_total;
    Scan(s.scan).ExclusiveSum(length_b, offset, chunk_total);
    const int products = int(chunk_total < kBatch ? chunk_total : kBatch);
    const bool included = e < a_end && offset < products;
    const int runs = __syncthreads_count(included);
    s.run_start[tid] = int32_t(offset < products ? offset : products);
    s.run_b[tid] = bs;
    s.run_a[tid] = av;
    if (tid == 0) s.run_start[kThreads] = products;
    if (products == 0) {
      if (tid == 0) {
        s.next_a = a_pos + kThreads < a_end ? a_pos + kThreads : a_end;
        s.next_b_off = 0;
      }
    } else if (tid == runs - 1) {
      const bool truncated = offset + length_b > products;
      s.next_a = truncated ? e : a_pos + runs;
      s.next_b_off = truncated ? (tid == 0 ? b_off : 0) + (products - offset) : 0;
    }
    __syncthreads();
    if (products == 0) {
      a_pos = s.next_a;
      b_off = 0;
      continue;  // the next scan's barriers order this read before the next write
    }

    // ---- Expand (consecutive threads on consecutive products: coalesced reads of B).
    for (int q = tid; q < products; q += kThreads) {
      const int r = last_not_above(s.run_start, runs, int32_t(q));
      const int64_t bp = s.run_b[r] + (q - s.run_start[r]);
      s.keys[0][q] = __ldg(b.col_idx + bp);
      s.vals[0][q] = product(s.run_a[r], __ldg(b.values + bp));
    }
    __syncthreads();

    // ---- Stable merge tree over the runs (merge_tree.cuh).
    const int src = merge_runs<kThreads, kItems>(&s.keys[0][0], &s.vals[0][0], kBatch, s.run_start, runs, products);
    const int32_t* keys = s.keys[src];
    const V* vals = s.vals[src];
    int32_t* new_cols = s.keys[src ^ 1];
    V* new_vals = s.vals[src ^ 1];

    // ---- Heads: find each run's column (level 2, then level 1 / the shared result). A thread's
    // heads are increasing, so each search gallops from the previous one's place.
    const int q0 = tid * kItems;
    int64_t place[kItems];
    int level[kItems];  // 0: new column, 1: shared (result or level 1), 2: global level 2
    int64_t fresh = 0, from2 = 0, from1 = 0;
    const int64_t shared_length = two_level ? level1 : length;
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      const int q = q0 + it;
      level[it] = -1;
      place[it] = 0;
      if (q >= products || (q > 0 && keys[q] == keys[q - 1])) continue;
      const int32_t key = keys[q];
      level[it] = 0;
      if (two_level) {
        from2 = gallop(global_cols, length, key, from2);
        if (from2 < length && global_cols[from2] == key) {
          level[it] = 2;
          place[it] = from2;
          continue;
        }
      }
      from1 = gallop(s.result_cols, shared_length, key, from1);
      if (from1 < shared_length && s.result_cols[from1] == key) {
        level[it] = 1;
        place[it] = from1;
        continue;
      }
      ++fresh;
    }
    int64_t new_index, new_count;
    Scan(s.scan).ExclusiveSum(fresh, new_index, new_count);
    if (length + level1 + new_count > capacity) {  // checkpoint: the batch is redone after the region grows
      if (two_level) flush();
      else copy_entries(s.result_cols, s.result_vals, global_cols, global_vals, length);
      if (tid == 0) {
        state.a_pos = a_pos;
        state.b_off = b_off;
        state.length = length;
        state.needed = length + new_count;
        overflow[atomicAdd(overflow_count, 1)] = index;
      }
      return;
    }

    // ---- Fold each run onto the result (existing column) or into a new entry.
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      if (level[it] < 0) continue;
      const int q = q0 + it;
      V* home = level[it] == 2 ? global_vals + place[it] : s.result_vals + place[it];
      V value = level[it] > 0 ? *home : V(0);
      int r = q;
      do {
        value = sum(value, vals[r]);
        ++r;
      } while (r < products && keys[r] == keys[q]);
      if (level[it] > 0) {
        *home = value;
      } else {
        new_cols[new_index] = keys[q];
        new_vals[new_index] = value;
        ++new_index;
      }
    }
    __syncthreads();

    // ---- The new columns into the shared result, or into level 1.
    if (new_count > 0) {
      if (!two_level && length + new_count > kResult) {  // the result becomes level 2
        copy_entries(s.result_cols, s.result_vals, global_cols, global_vals, length);
        two_level = true;
        level1 = 0;
        __syncthreads();
      }
      if (two_level) {
        merge_in_place(s.result_cols, s.result_vals, level1, new_cols, new_vals, new_count, s.first_moved);
        level1 += new_count;
      } else {
        merge_in_place(s.result_cols, s.result_vals, length, new_cols, new_vals, new_count, s.first_moved);
        length += new_count;
      }
    }
    a_pos = s.next_a;
    b_off = s.next_b_off;
    __syncthreads();
  }
  if (two_level) flush();
  else copy_entries(s.result_cols, s.result_vals, global_cols, global_vals, length);
  if (tid == 0) {
    state.a_pos = a_end;
    state.b_off = 0;
    state.length = length;
    count[row] = length;
  }
}

template <typename V>
__global__ void init_kernel(DeviceCsrView<V> a, const int64_t* __restrict__ bound, const int32_t* __restrict__ rows,
                            int64_t n, Temporary t, MergeRow<V>* __restrict__ states, int32_t* __restrict__ list) {
  for (int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n; j += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = t.r0 + rows[j];
    const int64_t offset = t.cap_scan[i] - t.cap_scan[t.r0];
    MergeRow<V> s;
    s.row = i;
    s.a_pos = a.row_ptr[i];
    s.bound = bound[i];
    s.capacity = t.cap_scan[i + 1] - t.cap_scan[i];
    s.cols = t.cols + offset;
    s.vals = static_cast<V*>(t.vals) + offset;
    states[j] = s;
    list[j] = int32_t(j);
  }
}

template <typename V>
__global__ void new_capacity_kernel(const MergeRow<V>* __restrict__ states, const int32_t* __restrict__ overflow,
                                    int64_t n, int64_t* __restrict__ capacity) {
  const int64_t j = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const MergeRow<V>& s = states[overflow[j]];
  int64_t grown = 2 * s.capacity > s.needed ? 2 * s.capacity : s.needed;
  capacity[j] = grown < s.bound ? grown : s.bound;
}

template <typename V>
__global__ void __launch_bounds__(kThreads)
    relocate_kernel(MergeRow<V>* states, const int32_t* __restrict__ overflow, const int64_t* __restrict__ capacity,
                    const int64_t* __restrict__ offsets, int32_t* arena_cols, V* arena_vals) {
  MergeRow<V>& s = states[overflow[blockIdx.x]];
  const int32_t* from_cols = s.cols;
  const V* from_vals = s.vals;
  const int64_t length = s.length, offset = offsets[blockIdx.x];
  copy_entries(from_cols, from_vals, arena_cols + offset, arena_vals + offset, length);
  __syncthreads();  // every thread has read the old pointers
  if (threadIdx.x == 0) {
    s.cols = arena_cols + offset;
    s.vals = arena_vals + offset;
    s.capacity = capacity[blockIdx.x];
    s.waiting = 0;
  }
}

}  // namespace

template <typename V>
void init_merge_rows(const DeviceCsrView<V>& a, const int64_t* bound, const int32_t* rows, int64_t begin,
                     int64_t end, const Temporary& t, MergeRow<V>* states, int32_t* list, const GpuContext& context) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  init_kernel<V><<<ctas_for(n, 256), 256, 0, context.stream>>>(a, bound, rows + begin, n, t, states, list);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V>
void merge_round(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, MergeRow<V>* states, const int32_t* list,
                 int64_t n, int32_t* overflow, int32_t* overflow_count, int64_t* count, bool b_unique,
                 const GpuContext& context) {
  if (n <= 0) return;
  const size_t bytes = sizeof(MergeShared<V>);
  SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(merge_kernel<V>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  require(n <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "binned SpGEMM: ", n, " merge rows in one launch");
  merge_kernel<V><<<unsigned(n), kThreads, bytes, context.stream>>>(a, b, states, list, overflow, overflow_count,
                                                                     count, b_unique);
  SPARSETC_CUDA_CHECK_LAUNCH();
}

template <typename V>
Arena grow_merge_rows(MergeRow<V>* states, const int32_t* overflow, int64_t n, const GpuContext& context) {
  DeviceBuffer capacity = gpuconv::buffer_of<int64_t>(n, context);
  DeviceBuffer offsets = gpuconv::buffer_of<int64_t>(n + 1, context);
  new_capacity_kernel<V><<<ctas_for(n, 256), 256, 0, context.stream>>>(states, overflow, n, capacity.as<int64_t>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  gpuconv::exclusive_scan_total(capacity.as<const int64_t>(), offsets.as<int64_t>(), n, context);
  const int64_t total = gpuconv::read_back(offsets.as<const int64_t>() + n, context.stream);
  Arena arena;
  arena.cols = gpuconv::buffer_of<int32_t>(total, context);
  arena.vals = gpuconv::buffer_of<V>(total, context);
  relocate_kernel<V><<<unsigned(n), kThreads, 0, context.stream>>>(states, overflow, capacity.as<const int64_t>(),
                                                                   offsets.as<const int64_t>(),
                                                                   arena.cols.as<int32_t>(), arena.vals.as<V>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  return arena;
}

#define SPARSETC_BINNED_MERGE(V)                                                                                   \
  template void init_merge_rows<V>(const DeviceCsrView<V>&, const int64_t*, const int32_t*, int64_t, int64_t,       \
                                   const Temporary&, MergeRow<V>*, int32_t*, const GpuContext&);                   \
  template void merge_round<V>(const DeviceCsrView<V>&, const DeviceCsrView<V>&, MergeRow<V>*, const int32_t*,     \
                               int64_t, int32_t*, int32_t*, int64_t*, bool, const GpuContext&);                    \
  template Arena grow_merge_rows<V>(MergeRow<V>*, const int32_t*, int64_t, const GpuContext&);
SPARSETC_BINNED_MERGE(float)
SPARSETC_BINNED_MERGE(double)
#undef SPARSETC_BINNED_MERGE

}  // namespace sparsetc::detail::binned
