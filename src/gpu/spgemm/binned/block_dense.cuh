// The block dense accumulator's pieces (block_dense.cu, numeric.cu): one block per row adds the
// row's products into a dense accumulator in shared memory, rows of B in the order of A's entries
// with a barrier between them (the canonical fold, see block_dense.cu), over passes of B's columns.
#pragma once

#include <algorithm>

#include "gpu/cuda_check.hpp"
#include "gpu/device_properties.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned::block_dense {

constexpr int kDenseThreads = 256;
constexpr int kInFlight = 8;  // rows of B whose first loads are issued together (16 measured slower)
constexpr int kUnroll = 4;    // loads in flight per thread along one long row of B

// Sets bit c. (Merging the bits of lanes on one word first, with __match_any_sync, measured slower:
// H200, rmat:16:16 42.7 against 15.2 ms, bloweya 16.4 against 10.5.)
__device__ __forceinline__ void set_bit(uint32_t* bits, int32_t c) { atomicOr(bits + (c >> 5), 1u << (c & 31)); }

// Shared memory of one block: the bits of all of B's columns, then the pass's accumulator.
template <typename V>
struct BlockDenseLayout {
  uint32_t* bits;
  V* acc;
  __device__ BlockDenseLayout(unsigned char* base, int64_t words) {
    bits = reinterpret_cast<uint32_t*>(base);
    acc = reinterpret_cast<V*>(base + ((words * int64_t(sizeof(uint32_t)) + 15) / 16) * 16);
  }
};

template <typename V>
struct RunSlots {
  int64_t start[kDenseThreads];   // first entry of the row of B within the pass
  int32_t length[kDenseThreads];  // its entries within the pass
  V a[kDenseThreads];             // the entry of A that scales it
};

// A long row of A over short rows of B is a long chain of barriers (lp_osa_60 A*A^T: a row of
// 173,366 entries meeting rows of B of 6). A chunk of 256 of the row's entries most of whose rows
// of B have fewer than kStreamPerRowOfB products and none shape.stream_long_row_of_b or more, in a
// row of at least shape.stream_min_entries entries, is added by one warp instead: its products 32
// at a time in the order of A's entries (a warp scan of the rows' lengths, a 5-step shuffle search
// for each lane's entry), lanes that hit the same column folded in lane order in registers
// (fold_rows_in_order). That is the same canonical fold.
constexpr int kStreamPerRowOfB = 16;

template <typename V>
__device__ void stream_chunk(const DeviceCsrView<V>& b, int entries, int32_t p0, bool set_bits, V* acc,
                             uint32_t* bits, const RunSlots<V>& slots) {
  const int lane = threadIdx.x & 31;
  for (int r0 = 0; r0 < entries; r0 += 32) {
    const int r = r0 + lane;
    fold_rows_in_order(
        b, r < entries ? slots.start[r] : 0, r < entries ? slots.length[r] : 0, r < entries ? slots.a[r] : V(0),
        [](int32_t c) { return int64_t(c); }, [&](int64_t c) { return acc[c - p0]; },
        [&](int64_t, int32_t c, V folded) {
          acc[c - p0] = folded;
          if (set_bits) atomicOr(bits + (c >> 5), 1u << (c & 31));
        });
  }
}

// Adds the products of A's entries [as, ae) whose columns fall in [p0, p1) to acc (indexed from
// p0), rows of B in A's order with a barrier between them; with set_bits also sets their bits.
// Every thread of the block calls it (it synchronises).
template <typename V>
__device__ void add_pass(const DeviceCsrView<V>& a, const DeviceCsrView<V>& b, int64_t as, int64_t ae, int32_t p0,
                         int32_t p1, bool whole_rows, bool set_bits, V* acc, uint32_t* bits,
                         const BlockDenseShape& shape) {
  __shared__ RunSlots<V> slots;
  const int tid = threadIdx.x;
  const bool long_row = ae - as >= shape.stream_min_entries;
  for (int64_t e0 = as; e0 < ae; e0 += kDenseThreads) {
    const int64_t e = e0 + tid;
    int32_t mine = 0;
    if (e < ae) {
      int64_t bs, be;
      row_of_b(b, __ldg(a.col_idx + e), bs, be);
      if (!whole_rows) {  // the part of the row of B inside the pass
        const int64_t first = bs + (p0 > 0 ? lower_bound_in(b.col_idx + bs, be - bs, p0) : 0);
        be = bs + lower_bound_in(b.col_idx + bs, be - bs, p1);
        bs = first;
      }
      slots.start[tid] = bs;
      slots.length[tid] = int32_t(be - bs);
      slots.a[tid] = __ldg(a.values + e);
      mine = int32_t(be - bs) < kStreamPerRowOfB;
    }
    const int entries = int(ae - e0 < kDenseThreads ? ae - e0 : kDenseThreads);
    // (the barriers: the slots are written; the counts: short rows of B in the chunk, and long ones,
    // which one warp would walk 32 lanes at a time: rmat's hub rows, 13.5 against 14.9 ms)
    const int short_rows = __syncthreads_count(mine);
    const int long_rows = __syncthreads_count(e < ae && slots.length[tid] >= shape.stream_long_row_of_b);
    if (long_row && short_rows * 2 > entries && long_rows == 0) {  // short rows of B only: one warp
      if (tid < 32) stream_chunk(b, entries, p0, set_bits, acc, bits, slots);
      __syncthreads();
      continue;
    }
    for (int r0 = 0; r0 < entries; r0 += kInFlight) {
      int32_t col[kInFlight];
      V val[kInFlight];
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) {
        const int r = r0 + k;
        if (r < entries && tid < slots.length[r]) {
          col[k] = __ldg(b.col_idx + slots.start[r] + tid);
          val[k] = __ldg(b.values + slots.start[r] + tid);
        }
      }
#pragma unroll
      for (int k = 0; k < kInFlight; ++k) {
        const int r = r0 + k;
        if (r >= entries) break;  // the same for every thread
        const int length = slots.length[r];
        if (length == 0) continue;  // the same for every thread: no barrier needed
        const V av = slots.a[r];
        auto add = [&](int32_t c, V bv) {
          acc[c - p0] = sum(acc[c - p0], product(av, bv));
          if (set_bits) set_bit(bits, c);
        };
        if (tid < length) add(col[k], val[k]);
        // The rest of a long row of B, kUnroll loads in flight per thread.
        const int64_t start = slots.start[r];
        for (int q0 = tid + kDenseThreads; q0 < length; q0 += kUnroll * kDenseThreads) {
          int32_t more_col[kUnroll];
          V more_val[kUnroll];
#pragma unroll
          for (int u = 0; u < kUnroll; ++u) {
            const int q = q0 + u * kDenseThreads;
            if (q < length) {
              more_col[u] = __ldg(b.col_idx + start + q);
              more_val[u] = __ldg(b.values + start + q);
            }
          }
#pragma unroll
          for (int u = 0; u < kUnroll; ++u)
            if (q0 + u * kDenseThreads < length) add(more_col[u], more_val[u]);
        }
        __syncthreads();
      }
    }
    __syncthreads();  // the slots are read before the next chunk overwrites them
  }
}

// Writes the touched columns of [p0, p1) (p0 a multiple of 32) in order at out_cols/out_vals from
// position `base`, clearing their bits and accumulator entries; returns the new base (to every
// thread). Rounds of kDenseThreads words: a block scan of the words' bit counts places them; then
// a warp whose words are sparse has each thread walk its own word's bits, and a warp whose
// non-empty words average kLaneBitsMin bits or more takes them one word at a time, a lane per bit:
// the stores of a word go to consecutive positions and the accumulator is read along consecutive
// banks, where a thread walking a full word writes 32 positions a warp's stores apart and reads
// the accumulator 32 words apart (H200, fp32, whole product: bloweya, rows of 10^4 entries, 6.1
// against 6.9 ms; from 8 bits, no better there and more instructions on sparser words).
constexpr int kLaneBitsMin = 16;
template <typename V>
__device__ int64_t compact_pass(int32_t p0, int32_t p1, V* acc, uint32_t* bits, int32_t* out_cols, V* out_vals,
                                int64_t base, bool write) {
  using Scan = cubns::BlockScan<int32_t, kDenseThreads>;
  __shared__ typename Scan::TempStorage scan;
  const int tid = threadIdx.x, lane = tid & 31;
  const uint32_t below = (1u << lane) - 1u;
  const int32_t w_first = p0 >> 5, w_end = (p1 + 31) >> 5;
  auto take = [&](int32_t c, int64_t at) {
    if (write) {
      out_cols[at] = c;
      out_vals[at] = acc[c - p0];
    }
    acc[c - p0] = V(0);
  };
  for (int32_t w0 = w_first; w0 < w_end; w0 += kDenseThreads) {
    const int32_t w = w0 + tid;
    const uint32_t word = w < w_end ? bits[w] : 0u;
    int32_t position, round_total;
    Scan(scan).ExclusiveSum(__popc(word), position, round_total);
    const unsigned nonempty = __ballot_sync(kFullMask, word != 0u);
    const unsigned warp_bits = __reduce_add_sync(kFullMask, unsigned(__popc(word)));
    if (warp_bits >= unsigned(kLaneBitsMin * __popc(nonempty))) {
      for (unsigned left = nonempty; left != 0u; left &= left - 1u) {
        const int owner = __ffs(int(left)) - 1;
        const uint32_t owner_word = __shfl_sync(kFullMask, word, owner);
        const int32_t owner_position = __shfl_sync(kFullMask, position, owner);
        if ((owner_word >> lane) & 1u)
          take((w - lane + owner) * 32 + lane, base + owner_position + __popc(owner_word & below));
      }
    } else {
      int64_t at = base + position;
      for (uint32_t left = word; left != 0u; left &= left - 1u) take(w * 32 + __ffs(int(left)) - 1, at++);
    }
    if (word != 0u) bits[w] = 0u;
    base += round_total;
    __syncthreads();  // the scan storage is reused next round
  }
  return base;
}

// The block's scratch in its dynamic shared memory, zeroed (every thread calls it).
template <typename V>
__device__ BlockDenseLayout<V> zeroed_scratch(unsigned char* dynamic, int64_t b_cols, int32_t pass_width) {
  const int64_t words = (b_cols + 31) >> 5;
  const BlockDenseLayout<V> s(dynamic, words);
  for (int64_t w = threadIdx.x; w < words; w += kDenseThreads) s.bits[w] = 0u;
  for (int32_t c = threadIdx.x; c < pass_width; c += kDenseThreads) s.acc[c] = V(0);
  __syncthreads();
  return s;
}

// Takes the next item of a launch's list (dynamic: rows differ widely in work).
__device__ inline int64_t next_item(unsigned long long* counter) {
  __shared__ int64_t slot;
  if (threadIdx.x == 0) slot = int64_t(atomicAdd(counter, 1ull));
  __syncthreads();
  const int64_t item = slot;
  __syncthreads();  // every thread has read it before thread 0 overwrites it
  return item;
}

// Blocks of `threads` with `bytes` of dynamic shared memory that the device holds at once (at least
// one per SM).
template <typename Kernel>
int64_t resident_blocks(Kernel kernel, int threads, size_t bytes) {
  int per_sm = 0;
  SPARSETC_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
  return int64_t(std::max(per_sm, 1)) * current_device_sm_count();
}

// A persistent grid: as many blocks as fit on the device at this shared-memory size, at most one
// per item.
template <typename Kernel>
unsigned persistent_blocks(Kernel kernel, size_t bytes, int64_t items) {
  SPARSETC_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(items, resident_blocks(kernel, kDenseThreads, bytes))));
}

inline DeviceBuffer zeroed_counter(const GpuContext& context) {
  DeviceBuffer counter(sizeof(unsigned long long), context);
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(counter.data(), 0, counter.size(), context.stream));
  return counter;
}

}  // namespace sparsetc::detail::binned::block_dense
