// The transpose of a structurally symmetric compressed structure (stencils, FEM matrices, bands):
// its lists are its own transpose's, so the output's offsets and indices are the input's, and each
// output value is its mirror entry's, found in the mirror list (where a repeating structure puts
// it, else by a binary search). No sort: one pass reads and writes each entry once.
//  1. probe (probe_structure): the middle entries of 1024 sampled lists are checked for a mirror
//     and for how far their mirror list lies (the pass gathers from it: lists within `window` of
//     each other stay in L2 while the pass goes by), and the widest sampled list is found (it tells
//     whether the local transpose can take the structure). One read-back.
//  2. pass (transpose_mirror): stands only where every list is strictly increasing, every index
//     is in range and every entry has its mirror; one read-back of that verdict. A refused pass
//     leaves the outputs to the caller's other transposes (which overwrite what it wrote).
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/device_properties.hpp"

namespace sparsetc::detail::gpuconv {
namespace mirror_transpose {

constexpr int kProbeLists = 1024;    // lists the probe samples (a thread each, one CTA)
constexpr int kItems = 8;            // merge-path steps per thread of the pass
constexpr int kLanes = 1;            // entries a thread of the pass carries at a time (measured best)

// The position of `key` in the strictly increasing idx[lo, hi), or -1: first at `guess`, where a
// structure that repeats from list to list puts it (a miss narrows the range), then by a binary
// search of what is left.
__device__ __forceinline__ int64_t find_in_list(const int32_t* __restrict__ idx, int64_t lo, int64_t hi, int32_t key,
                                                int64_t guess) {
  if (guess >= lo && guess < hi) {
    const int32_t v = idx[guess];
    if (v == key) return guess;
    if (v < key) lo = guess + 1;
    else hi = guess;
  }
  const int64_t q = lower_bound(idx, lo, hi, key);
  return q < hi && idx[q] == key ? q : -1;
}

// Where entry p of list j (its index `rank` there) finds its mirror: p's index i = idx[p] - base
// names the mirror list, whose entry of index j is the mirror. The first look is as far from the
// end of list i as p is from the start of list j (always right on a stencil's or a band's inner
// lists).
__device__ __forceinline__ int64_t find_mirror(const int64_t* __restrict__ ptr, const int32_t* __restrict__ idx,
                                               int64_t base, int64_t i, int64_t j, int64_t rank) {
  const int64_t lo = ptr[i], hi = ptr[i + 1];
  return find_in_list(idx, lo, hi, int32_t(j + base), hi - 1 - rank);
}

// The position of entry p's mirror (p in list j), or -1 where list j does not increase strictly at
// p, p's index is out of range or its mirror list has no index j: the rule the pass checks on
// every entry. (ptr zero-based; a list searched before its own entries were checked can only give
// a wrong answer where some entry of it fails its own check.)
__device__ __forceinline__ int64_t mirror_position(const int64_t* __restrict__ ptr, const int32_t* __restrict__ idx,
                                                   int64_t base, int64_t lists, int64_t p, int64_t j) {
  const int32_t here = idx[p];
  const int64_t i = int64_t(here) - base, start = ptr[j];
  if (i < 0 || i >= lists) return -1;
  if (p > start && idx[p - 1] >= here) return -1;
  return find_mirror(ptr, idx, base, i, j, p - start);
}

struct ProbeCounts {
  unsigned long long asymmetric;  // sampled entries without a mirror, out of order or out of range
  unsigned long long far;         // sampled entries whose mirror list lies more than `window` lists away
  unsigned long long widest;      // the widest list of a sampled entry: last index - first index
  unsigned long long refused;     // set by the pass where an entry breaks the rule
};

// One CTA, one thread per sampled list (evenly spaced): its middle entry's mirror and distance,
// and the list's width. Each thread follows one chain of dependent loads (an entry-sampling probe,
// whose threads searched the offsets for their entries' lists first, took 34 us on 512k lists, and
// four lists a thread one after another about as long). The CTA sums its counts in shared memory
// and writes all of `counts` (refused cleared for the pass), so nothing needs zeroing before it.
__global__ void __launch_bounds__(kProbeLists)
    probe_kernel(const int64_t* __restrict__ ptr, const int32_t* __restrict__ idx, int64_t base, int64_t lists,
                 int samples, int64_t window, ProbeCounts* counts) {
  __shared__ unsigned long long asymmetric, far, widest;
  if (threadIdx.x == 0) asymmetric = far = widest = 0;
  __syncthreads();
  const int s = int(threadIdx.x);
  const int64_t j = int64_t(s) * lists / samples;
  const int64_t begin = s < samples ? ptr[j] : 0, end = s < samples ? ptr[j + 1] : 0;
  if (end > begin) {
    const int64_t p = begin + (end - begin) / 2;
    if (mirror_position(ptr, idx, base, lists, p, j) < 0) atomicAdd(&asymmetric, 1ull);
    const int64_t i = int64_t(idx[p]) - base;
    if (i - j > window || j - i > window) atomicAdd(&far, 1ull);
    const int64_t span = int64_t(idx[end - 1]) - int64_t(idx[begin]);
    if (span > 0) atomicMax(&widest, static_cast<unsigned long long>(span));
  }
  __syncthreads();
  if (threadIdx.x == 0) *counts = ProbeCounts{asymmetric, far, widest, 0};
}

template <typename W, typename PO>
struct MirrorParams {
  const int64_t* ptr;  // zero-based
  const int32_t* idx;
  const W* val;
  int64_t base, lists, nnz, out_base;
  const int64_t* corners;  // merge_path_tiles of kThreads * kItems steps
  PO* out_ptr;
  int32_t* out_idx;
  W* out_val;
  ProbeCounts* counts;  // the probe's, where the pass adds its verdict
};

// One merge-path tile per CTA. Each thread takes kLanes of the tile's entries at a time through
// every step (their indices, the order check, the mirror lists' bounds, a first look where a
// structure that repeats from list to list puts the mirror, each round of the binary searches, the
// values). The offsets of the lists that end in the tile are written too. A CTA that starts after
// an earlier one refused the structure returns at once. Measured on H200 (stencils of 12-13.5M
// entries): without the first look, 1.4x slower; with two, four or eight entries a thread side by
// side, 1.0-1.04x, 1.1x and 1.6x slower than one: the pass is bound by the L1 wavefronts of its
// gathers, not by their latency, and registers cost resident warps. The same steps written as a
// plain loop over single entries compiled 1.2-1.7x slower on two of three stencils (and 1.05x
// faster on the third), so this shape stays. Entries below the diagonal writing both values of
// their pair, so that those above it search nothing, ran 1.25-1.36x slower: the values' scattered
// 8-byte stores cost more than the searches they saved. The probe's mirror_position, called here
// for each entry, ran poisson3d27:80 in 0.445 ms against 0.252 (poisson3d7:120 0.264 against 0.223,
// poisson2d5:1600 0.221-0.232 against 0.229): the pass keeps its own copy of those steps.
template <typename W, typename PO>
__global__ void __launch_bounds__(kThreads) mirror_kernel(MirrorParams<W, PO> m) {
  __shared__ int64_t row_end[kThreads * kItems + 1];
  __shared__ int32_t entry_row[kThreads * kItems];
  __shared__ unsigned long long stop;
  if (threadIdx.x == 0) stop = *static_cast<volatile unsigned long long*>(&m.counts->refused);
  __syncthreads();
  if (stop) return;
  const EntryTile t = entry_tile<kItems>(m.ptr, m.lists, m.nnz, m.corners, row_end, entry_row);
  for (int r = threadIdx.x; r < t.rows_done; r += kThreads) m.out_ptr[t.first_row + r + 1] = PO(row_end[r] + m.out_base);
  if (blockIdx.x == 0 && threadIdx.x == 0) m.out_ptr[0] = PO(m.out_base);
  bool bad = false;
  for (int e0 = threadIdx.x; e0 < t.entries; e0 += kThreads * kLanes) {
    int64_t p[kLanes], lo[kLanes], hi[kLanes], q[kLanes], rank[kLanes];
    int32_t here[kLanes], key[kLanes];
#pragma unroll
    for (int k = 0; k < kLanes; ++k) {
      const int e = e0 + k * kThreads;
      p[k] = e < t.entries ? t.first_entry + e : -1;
      here[k] = p[k] >= 0 ? m.idx[p[k]] : 0;
    }
#pragma unroll
    for (int k = 0; k < kLanes; ++k) {
      lo[k] = hi[k] = rank[k] = 0;
      q[k] = -1;
      key[k] = 0;
      if (p[k] < 0) continue;
      const int64_t j = t.first_row + entry_row[p[k] - t.first_entry];
      const int64_t i = int64_t(here[k]) - m.base;
      const int64_t list_start = m.ptr[j];
      if (i < 0 || i >= m.lists || (p[k] > list_start && m.idx[p[k] - 1] >= here[k])) {
        bad = true;
        p[k] = -1;
        continue;
      }
      lo[k] = m.ptr[i];
      hi[k] = m.ptr[i + 1];
      key[k] = int32_t(j + m.base);
      rank[k] = p[k] - list_start;
    }
    // The first look: as far from the end of list i as p is from the start of list j (always
    // right on a stencil's or a band's inner lists). A miss still narrows the search.
#pragma unroll
    for (int k = 0; k < kLanes; ++k) {
      const int64_t g = hi[k] - 1 - rank[k];
      if (lo[k] >= hi[k] || g < lo[k]) continue;
      const int32_t v = m.idx[g];
      if (v == key[k]) {
        q[k] = g;
        lo[k] = hi[k];
      } else if (v < key[k]) {
        lo[k] = g + 1;
      } else {
        hi[k] = g;
      }
    }
    for (bool searching = true; searching;) {  // one round of every lane's search at a time
      searching = false;
#pragma unroll
      for (int k = 0; k < kLanes; ++k) {
        if (lo[k] >= hi[k]) continue;
        searching = true;
        const int64_t mid = (lo[k] + hi[k]) >> 1;
        const int32_t v = m.idx[mid];
        if (v < key[k]) {
          lo[k] = mid + 1;
        } else {
          hi[k] = mid;
          if (v == key[k]) q[k] = mid;  // the only position of the key (strictly increasing lists)
        }
      }
    }
#pragma unroll
    for (int k = 0; k < kLanes; ++k) {
      if (p[k] < 0) continue;
      if (q[k] < 0) {
        bad = true;
        continue;
      }
      m.out_idx[p[k]] = int32_t(int64_t(here[k]) - m.base + m.out_base);
      m.out_val[p[k]] = m.val[q[k]];
    }
  }
  if (bad) m.counts->refused = 1ull;
}

}  // namespace mirror_transpose

// What the probe found (probe_structure).
struct StructureProbe {
  bool symmetric = false;  // every sampled entry has its mirror
  bool near = false;       // at most a quarter of the samples lie more than the L2 window from it
  int64_t widest = 0;      // the widest sampled list (last index - first index)
  DeviceBuffer counts;     // ProbeCounts, kept for the pass
};

// Probes a square structure of `lists` lists (ptr zero-based int64, idx with base) whose values
// take value_bytes each. One read-back.
inline StructureProbe probe_structure(int64_t lists, int64_t nnz, const int64_t* ptr, const int32_t* idx,
                                      int64_t base, size_t value_bytes, const GpuContext& context) {
  using namespace mirror_transpose;
  StructureProbe probe;
  if (lists < 1 || nnz < 1) return probe;
  probe.counts = buffer_of<ProbeCounts>(1, context);
  ProbeCounts* counts = probe.counts.as<ProbeCounts>();
  // A window of lists whose entries take half of L2: the mirror lists the pass reads stay there.
  const double bytes_per_list = double(nnz) * double(sizeof(int32_t) + value_bytes) / double(lists);
  const int64_t window =
      std::max<int64_t>(1024, int64_t(0.5 * double(current_device_l2_bytes()) / std::max(bytes_per_list, 1.0)));
  const int samples = int(std::min<int64_t>(lists, kProbeLists));
  probe_kernel<<<1, kProbeLists, 0, context.stream>>>(ptr, idx, base, lists, samples, window, counts);
  SPARSETC_CUDA_CHECK_LAUNCH();
  const ProbeCounts found = read_back(counts, context.stream);
  probe.symmetric = found.asymmetric == 0;
  probe.near = 4 * found.far <= uint64_t(samples);
  probe.widest = int64_t(found.widest);
  return probe;
}

// The pass above over `lists` lists and as many indices, after probe_structure found it symmetric:
// ptr zero-based int64 (lists + 1), idx with in_base; writes out_ptr (lists + 1, out_base added),
// out_idx and out_val (nnz each) and returns true, or returns false where some entry breaks the
// rule. One read-back.
template <typename W, typename PO>
bool transpose_mirror(int64_t lists, int64_t nnz, const int64_t* ptr, const int32_t* idx, const W* val,
                      int64_t in_base, PO* out_ptr, int32_t* out_idx, W* out_val, int64_t out_base,
                      StructureProbe& probe, const GpuContext& context) {
  using namespace mirror_transpose;
  if (lists < 1 || nnz < 1) return false;
  ProbeCounts* counts = probe.counts.as<ProbeCounts>();
  constexpr int64_t kPath = int64_t(kThreads) * kItems;
  const MergePathTiles tiles = merge_path_tiles(ptr, lists, nnz, kPath, context);
  const MirrorParams<W, PO> params{ptr,     idx,     val,     in_base, lists, nnz, out_base, tiles.corner.as<const int64_t>(),
                                   out_ptr, out_idx, out_val, counts};
  mirror_kernel<W, PO><<<ctas_for(lists + nnz, kPath), kThreads, 0, context.stream>>>(params);
  SPARSETC_CUDA_CHECK_LAUNCH();
  return read_back(&counts->refused, context.stream) == 0;
}

}  // namespace sparsetc::detail::gpuconv
