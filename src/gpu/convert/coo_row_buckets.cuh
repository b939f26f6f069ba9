// COO in any order -> CSR by row buckets: a counting sort of the entries into buckets of
// consecutive rows, then each bucket sorted by (row, column, entry number) in shared memory. The
// radix sort of 64-bit (row, column) keys (normalize.cu) makes five passes over keys and entry
// numbers and then gathers the values at random; this moves every entry twice.
//
//  1. count_row_buckets_kernel: each CTA counts its entries per bucket (bucket = row /
//     rows_per_bucket) in shared memory and adds the counts to the buckets' sizes; a scan gives
//     their starts. The largest bucket is read back: one above kBucketCap entries sends the matrix
//     to the radix sort.
//  2. scatter_row_buckets_kernel: every entry takes the next slot of its bucket (a global atomic
//     on the bucket's cursor, so the order inside a bucket is arbitrary: the entry number, carried
//     along, restores the input order) and is stored there as one 16-byte record: the row inside
//     the bucket and the column packed in 32 bits, the entry number, the value. Each bucket fills
//     from its front, so the few sectors being filled stay in L2 until they are whole.
//  3. sort_row_buckets_kernel: one CTA a bucket, in shared memory: a counting sort by row, then
//     each row by (column, entry number): rows of at most kRankedRow entries by counting, for each
//     entry, the row's keys below its own; longer rows by a bitonic sort of the CTA. Runs of one
//     (row, column) are summed in entry order (the host's order, so the sums are bit-identical).
//     A decoupled look-back over the buckets gives each bucket its first output slot, so row_ptr,
//     col_idx and the values are written once. The first repeated entry (for the error message)
//     goes to an atomicMin.
// Measured on poisson3d27:80 (H200, double): the scatter takes 0.47 ms as here (its atomics bind
// L2), 3.2 ms with slots reserved per chunk of 51k entries from a chunks x buckets table, 1.26 ms
// with one cursor a bucket and the row, column, entry and value in four arrays, 2.0 ms with eight
// cursors a bucket: four partial sectors an entry, and more fronts than L2 keeps.
// Requires nnz < 2^32 (entry numbers), rows < 2^31, at most kMaxBuckets buckets of at most
// kBucketCap rows, and the row in a bucket and the column within 32 bits together (col_bits, 1 to
// 31, for the columns; the rest for the rows).
#pragma once

#include <cub/cub.cuh>

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/fast_divider.hpp"
#include "gpu/convert/lookback_scan.cuh"

namespace sparsetc::detail::gpuconv {

constexpr int kBucketThreads = 256;                           // threads of the sort
constexpr int kBucketItems = 8;                               // entries (and rows) a thread of the sort holds
constexpr int kBucketCap = kBucketThreads * kBucketItems;     // entries, and rows, of a bucket
constexpr int kRankedRow = 64;                                // longer rows take the bitonic sort
constexpr int kLongRows = kBucketCap / (kRankedRow + 1) + 1;  // rows above kRankedRow a bucket can hold
constexpr int64_t kBucketTarget = 1024;                       // mean entries a bucket
constexpr int64_t kMaxBuckets = 16384;                        // shared counters of the count
constexpr int kChunkThreads = 512;                            // threads of the count and the scatter
constexpr int kChunkLoads = 4;                                // entries a thread loads before it places them
constexpr int64_t kMinChunks = 264;                           // CTAs of the count and the scatter: two an SM

// ---- 1. count

// The count and the scatter walk the entries alike: CTA x takes the runs of kChunkThreads *
// kChunkLoads entries x, x + gridDim.x, ...
template <typename O>
__global__ void __launch_bounds__(kChunkThreads)
    count_row_buckets_kernel(const O* __restrict__ rows, int64_t base, int64_t nnz, FastDivider bucket_rows,
                             int buckets, unsigned int* __restrict__ size) {
  extern __shared__ uint32_t bucket_count[];
  for (int b = threadIdx.x; b < buckets; b += kChunkThreads) bucket_count[b] = 0;
  __syncthreads();
  const int64_t step = int64_t(gridDim.x) * kChunkThreads * kChunkLoads;
  for (int64_t e = int64_t(blockIdx.x) * kChunkThreads * kChunkLoads + threadIdx.x; e < nnz; e += step) {
    uint32_t row[kChunkLoads];
#pragma unroll
    for (int i = 0; i < kChunkLoads; ++i) {
      const int64_t k = e + int64_t(i) * kChunkThreads;
      row[i] = k < nnz ? uint32_t(int64_t(__ldg(rows + k)) - base) : 0xFFFFFFFFu;
    }
#pragma unroll
    for (int i = 0; i < kChunkLoads; ++i)
      if (row[i] != 0xFFFFFFFFu) atomicAdd(&bucket_count[bucket_rows.divide(row[i])], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < buckets; b += kChunkThreads)
    if (bucket_count[b] > 0) atomicAdd(size + b, bucket_count[b]);
}

// The fill cursors of the buckets, from their starts; the largest bucket.
struct BucketCursors {
  const int64_t* start;
  uint32_t* cursor;
  unsigned int* largest;
  __device__ void operator()(int64_t b) const {
    cursor[b] = uint32_t(start[b]);
    atomicMax(largest, unsigned(start[b + 1] - start[b]));
  }
};

// ---- 2. scatter

// An entry in its bucket (bucket b in slots [start[b], start[b + 1])): one 16-byte store.
template <typename V>
struct alignas(16) BucketRecord {
  uint32_t row_col;  // the row inside the bucket << col_bits | the zero-based column
  uint32_t entry;    // the entry number in the input
  V value;
};

// One 16-byte store (the struct's fields would go as two).
template <typename V>
__device__ inline void store_record(BucketRecord<V>* at, uint32_t row_col, uint32_t entry, V value) {
  uint4 word{row_col, entry, 0u, 0u};
  if constexpr (sizeof(V) == 8) {
    const auto bits = static_cast<unsigned long long>(__double_as_longlong(value));
    word.z = uint32_t(bits);
    word.w = uint32_t(bits >> 32);
  } else {
    word.z = __float_as_uint(value);
  }
  *reinterpret_cast<uint4*>(at) = word;
}

template <typename O, typename I, typename V>
__global__ void __launch_bounds__(kChunkThreads)
    scatter_row_buckets_kernel(const O* __restrict__ rows, const I* __restrict__ cols, const V* __restrict__ values,
                               int64_t base, int64_t nnz, FastDivider bucket_rows, int col_bits,
                               uint32_t* __restrict__ cursor, BucketRecord<V>* __restrict__ out) {
  const int64_t step = int64_t(gridDim.x) * kChunkThreads * kChunkLoads;
  for (int64_t e = int64_t(blockIdx.x) * kChunkThreads * kChunkLoads + threadIdx.x; e < nnz; e += step) {
    uint32_t row[kChunkLoads];
    int32_t col[kChunkLoads];
    V value[kChunkLoads];
#pragma unroll
    for (int i = 0; i < kChunkLoads; ++i) {
      const int64_t k = e + int64_t(i) * kChunkThreads;
      row[i] = 0xFFFFFFFFu;
      if (k < nnz) {
        row[i] = uint32_t(int64_t(__ldg(rows + k)) - base);
        col[i] = int32_t(int64_t(__ldg(cols + k)) - base);
        value[i] = __ldg(values + k);
      }
    }
#pragma unroll
    for (int i = 0; i < kChunkLoads; ++i) {
      if (row[i] == 0xFFFFFFFFu) continue;
      const uint32_t b = bucket_rows.divide(row[i]);
      const uint32_t slot = atomicAdd(cursor + b, 1u);
      store_record(out + slot, bucket_rows.remainder(row[i], b) << col_bits | uint32_t(col[i]),
                   uint32_t(e + int64_t(i) * kChunkThreads), value[i]);
    }
  }
}

// ---- 3. sort of each bucket

// Sorts key[0..len) (and src with it) ascending by a bitonic network padded to a power of two by
// keys above every key: each merge starts by comparing mirrored pairs, so every comparison puts
// the smaller key first and a pair reaching past len has nothing to do. All threads of the CTA.
__device__ inline void bitonic_sort_row(uint64_t* key, uint16_t* src, int len) {
  int size = 1;
  while (size < len) size <<= 1;
  for (int k = 2; k <= size; k <<= 1)
    for (int d = k >> 1; d >= 1; d >>= 1) {
      for (int i = threadIdx.x; i < size / 2; i += kBucketThreads) {
        const int group = i / d, offset = i - group * d;
        const int a = d == k >> 1 ? group * k + offset : group * 2 * d + offset;
        const int c = d == k >> 1 ? group * k + k - 1 - offset : a + d;
        if (c < len && key[c] < key[a]) {
          const uint64_t t = key[a];
          key[a] = key[c];
          key[c] = t;
          const uint16_t s = src[a];
          src[a] = src[c];
          src[c] = s;
        }
      }
      __syncthreads();
    }
}

template <typename V>
struct BucketOutput {
  int64_t* row_ptr;  // rows + 1
  int32_t* col_idx;  // at least the kept entries
  V* values;
  unsigned long long* first_repeat;  // (entry << 32 | its first twin), smallest first; starts at ~0
};

template <typename V>
__global__ void __launch_bounds__(kBucketThreads)
    sort_row_buckets_kernel(const int64_t* __restrict__ bucket_start, const BucketRecord<V>* __restrict__ in,
                            int64_t rows, int bucket_rows, int col_bits, TilePrefixes prefixes, BucketOutput<V> out) {
  using Scan = cubns::BlockScan<uint32_t, kBucketThreads>;
  __shared__ typename Scan::TempStorage scan;
  __shared__ uint32_t row_first[kBucketCap + 1];  // row counts, then each row's first slot
  __shared__ uint64_t key[kBucketCap];            // column << 32 | entry number, by row
  __shared__ uint16_t src[kBucketCap];            // the slot in the bucket of each key
  __shared__ uint16_t row_of[kBucketCap];         // the row of each slot
  __shared__ uint16_t order[kBucketCap];          // sorted position -> slot of key
  __shared__ uint16_t kept_before[kBucketCap];    // run starts before each sorted position
  __shared__ uint16_t long_rows[kLongRows];
  __shared__ int long_count;
  __shared__ int64_t first_out;

  const int tid = threadIdx.x;
  const int64_t b = blockIdx.x, start = bucket_start[b];
  const int n = int(bucket_start[b + 1] - start);
  const int64_t r0 = b * bucket_rows;
  const int nr = int(rows - r0 < bucket_rows ? rows - r0 : bucket_rows);
  for (int r = tid; r < nr; r += kBucketThreads) row_first[r] = 0;
  if (tid == 0) long_count = 0;
  __syncthreads();

  // Counting sort by row (the rank inside a row is arbitrary; the keys sort it).
  uint32_t my_row_col[kBucketItems], my_entry[kBucketItems];
  uint16_t my_row[kBucketItems], my_rank[kBucketItems];
#pragma unroll
  for (int i = 0; i < kBucketItems; ++i) {
    const int e = tid + i * kBucketThreads;
    if (e < n) {
      // row_col and entry in one 8-byte load (entry loaded again after the scan cost the kernel 4-7%)
      const uint2 head = *reinterpret_cast<const uint2*>(in + start + e);
      my_row_col[i] = head.x;
      my_entry[i] = head.y;
      my_row[i] = uint16_t(my_row_col[i] >> col_bits);
      my_rank[i] = uint16_t(atomicAdd(&row_first[my_row[i]], 1u));
    }
  }
  __syncthreads();
  {
    uint32_t counts[kBucketItems];
#pragma unroll
    for (int i = 0; i < kBucketItems; ++i) {
      const int r = tid * kBucketItems + i;
      counts[i] = r < nr ? row_first[r] : 0;
    }
    Scan(scan).ExclusiveSum(counts, counts);
#pragma unroll
    for (int i = 0; i < kBucketItems; ++i) {
      const int r = tid * kBucketItems + i;
      if (r < nr) row_first[r] = counts[i];
    }
    if (tid == 0) row_first[nr] = uint32_t(n);
  }
  __syncthreads();
#pragma unroll
  for (int i = 0; i < kBucketItems; ++i) {
    const int e = tid + i * kBucketThreads;
    if (e < n) {
      const int p = int(row_first[my_row[i]]) + my_rank[i];
      key[p] = uint64_t(my_row_col[i] & ((1u << col_bits) - 1)) << 32 | my_entry[i];
      src[p] = uint16_t(e);
      row_of[p] = my_row[i];
    }
  }
  __syncthreads();

  // Each row by (column, entry number): short rows by counting, long ones listed.
  for (int q = tid; q < n; q += kBucketThreads) {
    const int r = row_of[q], lo = int(row_first[r]), hi = int(row_first[r + 1]);
    if (hi - lo <= kRankedRow) {
      const uint64_t k = key[q];
      int rank = 0;
      for (int t = lo; t < hi; ++t) rank += key[t] < k;
      order[lo + rank] = uint16_t(q);
    } else if (q == lo) {
      long_rows[atomicAdd(&long_count, 1)] = uint16_t(r);
    }
  }
  __syncthreads();
  for (int l = 0; l < long_count; ++l) {
    const int lo = int(row_first[long_rows[l]]), len = int(row_first[long_rows[l] + 1]) - lo;
    bitonic_sort_row(key + lo, src + lo, len);  // ends with a barrier
    for (int t = tid; t < len; t += kBucketThreads) order[lo + t] = uint16_t(lo + t);
  }
  __syncthreads();

  // Runs of one (row, column): their starts, counted (thread-contiguous positions for the scan).
  const auto column_at = [&](int t) { return uint32_t(key[order[t]] >> 32); };  // of sorted position t
  uint32_t kept = 0;
  {
    uint32_t starts[kBucketItems];
#pragma unroll
    for (int i = 0; i < kBucketItems; ++i) {
      const int t = tid * kBucketItems + i;
      starts[i] = 0;
      if (t < n) starts[i] = t == int(row_first[row_of[t]]) || column_at(t) != column_at(t - 1);
    }
    Scan(scan).ExclusiveSum(starts, starts, kept);
#pragma unroll
    for (int i = 0; i < kBucketItems; ++i) {
      const int t = tid * kBucketItems + i;
      if (t < n) kept_before[t] = uint16_t(starts[i]);
    }
  }
  if (tid < 32) {
    const int64_t prefix = prefixes.exclusive_prefix(b, int64_t(kept));  // kept is the CTA's total
    if (tid == 0) first_out = prefix;
  }
  __syncthreads();
  const int64_t first = first_out;

  // Writes: each run summed in entry order, and the rows' offsets.
  for (int t = tid; t < n; t += kBucketThreads) {
    const int q = order[t], r = row_of[t];
    const uint32_t col = column_at(t);
    const bool run_start = t == int(row_first[r]) || col != column_at(t - 1);
    if (run_start) {
      V sum = in[start + src[q]].value;
      const int hi = int(row_first[r + 1]);
      for (int u = t + 1; u < hi && column_at(u) == col; ++u) sum += in[start + src[order[u]]].value;
      out.col_idx[first + kept_before[t]] = int32_t(col);
      out.values[first + kept_before[t]] = sum;
    } else if (t == int(row_first[r]) + 1 || column_at(t - 2) != col) {
      // the second of its run: the run's first repeat, the run's first entry its twin
      atomicMin(out.first_repeat, (unsigned long long)(uint32_t(key[q])) << 32 | uint32_t(key[order[t - 1]]));
    }
  }
  for (int r = tid; r < nr; r += kBucketThreads) {
    const int lo = int(row_first[r]);
    out.row_ptr[r0 + r] = first + (lo < n ? kept_before[lo] : kept);
  }
  if (r0 + nr == rows && tid == 0) out.row_ptr[rows] = first + kept;
}

}  // namespace sparsetc::detail::gpuconv
