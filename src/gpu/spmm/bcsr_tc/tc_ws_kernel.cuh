// The warp-specialized tensor-core SpMM kernel for the 32-column and the wide tiles of fp16 / bf16
// with row-major B (configurations: TcWsConfig in tc_config.hpp). Grid: work items x N tiles, N tile fastest.
//
// Why another kernel: the CTA-synchronous kernel (tc_spmm_kernel.cuh) has every warp copy its share
// of each stage and meet at a CTA barrier per stage, which holds all warps in lock-step and spends
// about as many instructions on copies and bookkeeping as on MMAs (ncu: issue- and latency-bound).
// Here producer warps (one per SM sub-partition) do all copies and the consumer warps only load
// fragments and multiply:
//  - the producers walk the item's entries, KS per stage, into a ring of STAGES stages: for each
//    entry the present A blocks (consecutive in the operand's values) and the B slab, with cp.async
//    (zero-filled past K and N), then signal the stage's `full` barrier once their copies land
//    (cp.async.mbarrier.arrive) and their mask words are written (mbarrier.arrive);
//  - each consumer waits on `full`, multiplies the stage's entries with the next entry's fragments
//    loaded before the current MMAs (across stage boundaries too), and arrives on the stage's `empty`
//    barrier as soon as it has read the stage's last fragments, which lets the producer refill it.
// The entry descriptors reach each producer 32 at a time (one coalesced load per lane, a batch
// ahead) and are broadcast with shuffles. The end (split chunks, C) is the other kernel's.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpu/spmm/bcsr_tc/tc_config.hpp"
#include "gpu/spmm/bcsr_tc/tc_epilogue.cuh"
#include "gpu/spmm/bcsr_tc/tc_fragments.cuh"
#include "gpu/spmm/bcsr_tc/tc_launch.hpp"
#include "gpu/spmm/bcsr_tc/tc_mma_traits.cuh"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"
#include "gpu/spmm/bcsr_tc/tc_schedule.hpp"
#include "gpu/spmm/bcsr_tc/tc_slab.cuh"
#include "gpu/spmm/bcsr_tc/tc_stage.cuh"

namespace sparsetc::detail::tc {

// Shared memory: STAGES stages of [A: KS entries x G blocks x 512][B: KS slabs][masks: KS x uint32],
// then the barriers (full[STAGES], empty[STAGES]). A and B are laid out by the configuration's
// operand layouts (tc_slab.cuh): A blocks swizzled for ldmatrix (tc_stage.cuh) and B in padded rows
// for ldmatrix.trans, or both as wgmma's core matrices.
template <class T, class Cfg>
struct WsLayout {
  using Slab = typename Cfg::template Slab<T>;
  using APanel = typename Cfg::template APanel<T>;
  static constexpr int kSlabBytes = Slab::kBytes;
  static constexpr int kAStage = Cfg::kKS * Cfg::kG * kBlockBytes;
  static constexpr int kBStage = Cfg::kKS * kSlabBytes;
  // Stages (and so their slabs, kAStage and kSlabBytes being multiples) start on the slab's alignment;
  // kBaseAlign: the alignment the kernel rounds the start of its dynamic shared memory up to (the
  // extra bytes are counted in kSmemBytes).
  static constexpr int kBaseAlign = Slab::kAlign > 128 ? Slab::kAlign : 128;
  static_assert(kAStage % kBaseAlign == 0 && kSlabBytes % kBaseAlign == 0, "aligned slabs");
  static constexpr int kStageBytes = (kAStage + kBStage + Cfg::kKS * 4 + kBaseAlign - 1) / kBaseAlign * kBaseAlign;
  static constexpr int kBarrierOffset = Cfg::kStages * kStageBytes;
  static constexpr int kSmemBytes = kBarrierOffset + 2 * Cfg::kStages * 8 + (kBaseAlign > 128 ? kBaseAlign : 0);

  // The start of the layout in a dynamic shared-memory window declared 128-byte aligned.
  static __device__ __forceinline__ uint32_t base_of(const void* smem) {
    return (smem_address(smem) + uint32_t(kBaseAlign - 1)) & ~uint32_t(kBaseAlign - 1);
  }

  // Where block g of an entry starts (APanel::offset places its chunks from there).
  static __device__ __forceinline__ uint32_t a_block(uint32_t base, int slot, int entry, int g) {
    return base + slot * kStageBytes + entry * Cfg::kG * kBlockBytes + g * APanel::kBlockStride;
  }
  static __device__ __forceinline__ uint32_t slab(uint32_t base, int slot, int entry) {
    return base + slot * kStageBytes + kAStage + entry * kSlabBytes;
  }
  static __device__ __forceinline__ uint32_t mask(uint32_t base, int slot, int entry) {
    return base + slot * kStageBytes + kAStage + kBStage + entry * 4;
  }
  static __device__ __forceinline__ uint32_t full(uint32_t base, int slot) { return base + kBarrierOffset + slot * 8; }
  static __device__ __forceinline__ uint32_t empty(uint32_t base, int slot) {
    return base + kBarrierOffset + (Cfg::kStages + slot) * 8;
  }
};

template <class T, class Cfg>
struct WsProducer {
  using Layout = WsLayout<T, Cfg>;
  using Slab = typename Layout::Slab;
  using Value = typename T::Value;
  static constexpr int kEPC = Slab::kEPC;                          // elements per 16-byte chunk
  static constexpr int kBlockChunks = kBlockBytes / 16;
  static_assert(kBlockChunks == 32, "one 16-byte chunk of each A block per lane");
  // Producer warps per stage (each copies kEntriesPerWarp of its entries), and stages from one of a
  // warp's stages to its next (P > KS: the warps take turns over the stages).
  static constexpr int kWarpsPerStage = Cfg::kKS < Cfg::kProducerWarps ? Cfg::kKS : Cfg::kProducerWarps;
  static constexpr int kEntriesPerWarp = Cfg::kKS / kWarpsPerStage;
  static constexpr int kStageStride = Cfg::kProducerWarps / kWarpsPerStage;
  static_assert(Cfg::kKS % Cfg::kProducerWarps == 0 || Cfg::kProducerWarps % Cfg::kKS == 0, "whole entries per warp");
  static_assert(kStageStride <= Cfg::kStages && kStageStride * Cfg::kKS <= 32, "one slot wrap, one batch a step");
  // Arrivals that complete a `full` phase: per producer warp of the stage, each lane once when its
  // copies land and lane 0 once after the warp's shared-memory stores (masks, element-wise B).
  static constexpr int kFullArrivals = kWarpsPerStage * 33;

  static __device__ __forceinline__ TcEntry entry(const TcEntry* entries, int64_t count, int64_t i) {
    TcEntry d{0, 0, 0u};  // past the end: no blocks
    if (i < count) {
      const int4 raw = __ldg(reinterpret_cast<const int4*>(entries + i));
      memcpy(&d, &raw, sizeof d);
    }
    return d;
  }

  // Producer warp `pw` copies entries pw % W, pw % W + W, ... (W = kWarpsPerStage) of stages
  // pw / W, pw / W + kStageStride, ... ring: where the item's stage 0 sits on the ring (RingCta::advance).
  static __device__ void run(const TcKernelParams& p, const TcWorkItem& item, int64_t n0, uint32_t base, int pw,
                             int lane, int64_t stages, int ring = 0) {
    const TcEntry* entries = p.entries + item.entry_begin;
    const int64_t count = item.entry_end - item.entry_begin;
    const Value* b = static_cast<const Value*>(p.b);
    // Lane roles, the same for every entry: one 16-byte chunk of each A block (APanel::lane_row,
    // lane_chunk); B slab chunks by the slab.
    using APanel = typename Layout::APanel;
    const int a_row = APanel::lane_row(lane), a_chunk = APanel::lane_chunk(lane);
    const unsigned char* a_src = static_cast<const unsigned char*>(p.values) +
                                 (a_row * T::kAChunksPerRow + a_chunk) * 16;
    const uint32_t a_dst = APanel::offset(a_row, a_chunk);
    const int j0 = pw % kWarpsPerStage;
    // Slabs inside B (all of the N tile, all rows below K, 16-byte copies): this lane's first chunk
    // at b_lane + k0 * ldb, the others at fixed steps from it, no bounds to check.
    const bool n_inside = p.b_aligned && n0 + Cfg::kTN <= p.n;
    const Value* b_lane = b + int64_t(Slab::row(0, lane)) * p.ldb + n0 + Slab::chunk(0, lane) * kEPC;

    TcEntry batch = entry(entries, count, lane), next = entry(entries, count, 32 + lane);
    int64_t batch_first = 0;  // entry index of batch's lane 0
    int64_t s = pw / kWarpsPerStage;
    // The slot of stage s and the parity of its `empty` barrier: the phase "before 0" counts as
    // completed (every slot starts free), so the first pass over the ring waits on parity 1.
    const int at = (ring + int(s)) % (2 * Cfg::kStages);
    int slot = at % Cfg::kStages;
    uint32_t parity = uint32_t(at / Cfg::kStages) ^ 1u;
    for (; s < stages; s += kStageStride) {
      if (s * Cfg::kKS >= batch_first + 32) {
        batch = next;
        batch_first += 32;
        next = entry(entries, count, batch_first + 32 + lane);
      }
      const int in_batch = int(s * Cfg::kKS - batch_first);
      mbarrier_wait(Layout::empty(base, slot), parity);
#pragma unroll
      for (int jj = 0; jj < kEntriesPerWarp; ++jj) {
        const int j = j0 + jj * kWarpsPerStage;
        const uint32_t mask = __shfl_sync(0xffffffffu, batch.mask, in_batch + j);
        if (lane == 0) sts_u32(Layout::mask(base, slot, j), mask);
        if (mask == 0) continue;
        const int64_t first = __shfl_sync(0xffffffffu, batch.first_block, in_batch + j);
        const int32_t col_block = __shfl_sync(0xffffffffu, batch.col_block, in_batch + j);
        // A: the entry's blocks are consecutive in the operand, in block-row order. Where the MMA
        // reads groups of blocks whole (APanel::kZeroGroup), the absent ones of a group with a block
        // are zero-filled.
        const unsigned char* a = a_src + first * kBlockBytes;
        const uint32_t a_to = Layout::a_block(base, slot, j, 0) + a_dst;
#pragma unroll
        for (int g = 0; g < Cfg::kG; ++g)
          if ((mask >> g) & 1u) {
            cp_async_16(a_to + g * Layout::APanel::kBlockStride, a, 16);
            a += kBlockBytes;
          } else if constexpr (Layout::APanel::kZeroGroup > 1) {
            constexpr int kGroup = Layout::APanel::kZeroGroup;
            if ((mask >> (g / kGroup * kGroup)) & ((1u << kGroup) - 1u))
              cp_async_16(a_to + g * Layout::APanel::kBlockStride, a_src, 0);
          }
        // B: rows [col_block * width, + width), columns [n0, n0 + TN); zeros past K and N.
        const int64_t k0 = int64_t(col_block) * T::kBlockW;
        const int64_t rows_left = p.k - k0;
        const uint32_t b_to = Layout::slab(base, slot, j);
        if (n_inside && rows_left >= T::kBlockW) {
          const Value* src = b_lane + k0 * p.ldb;
#pragma unroll
          for (int pass = 0; pass < Slab::kPasses; ++pass)
            cp_async_16(b_to + Slab::offset(Slab::row(pass, lane), Slab::chunk(pass, lane)),
                        src + Slab::row_step(pass) * p.ldb + Slab::chunk_step(pass) * kEPC, 16);
          continue;
        }
#pragma unroll
        for (int pass = 0; pass < Slab::kPasses; ++pass) {
          const int r = Slab::row(pass, lane), c = Slab::chunk(pass, lane);
          const int64_t col = n0 + c * kEPC;
          const int valid = r < rows_left ? int(min(max(p.n - col, int64_t(0)), int64_t(kEPC))) : 0;
          const Value* src = b + (k0 + r) * p.ldb + col;
          const uint32_t dst = b_to + Slab::offset(r, c);
          if (p.b_aligned) {
            cp_async_16(dst, valid > 0 ? src : b, valid * T::kElemBytes);
          } else {
            Value v[kEPC];
#pragma unroll
            for (int e = 0; e < kEPC; ++e) v[e] = e < valid ? src[e] : Value(0);
            uint4 packed;
            memcpy(&packed, v, 16);
            st_shared_16(dst, packed);
          }
        }
      }
      cp_async_mbarrier_arrive(Layout::full(base, slot));
      __syncwarp();
      if (lane == 0) mbarrier_arrive(Layout::full(base, slot));
      slot += kStageStride;
      if (slot >= Cfg::kStages) {
        slot -= Cfg::kStages;
        parity ^= 1u;
      }
    }
  }
};

// A CTA's work on the stage ring (this file's kernel and the wgmma one): its work item, N tile and
// stage count, and its end. The warp index and the stage count are broadcast from lane 0, so that
// ptxas knows them warp-uniform (the wgmma consumers would otherwise sit on a divergent path, where it
// serializes their MMAs).
template <class T, class Cfg>
struct RingCta {
  using Layout = WsLayout<T, Cfg>;
  TcWorkItem item;
  int64_t n_tile, n0, stages;
  int lane, warp;
  bool producer;

  // Every thread of the CTA, once: initialises the barriers and meets the others.
  static __device__ __forceinline__ void init_ring(uint32_t base) {
    const int tid = threadIdx.x;
    if (tid < Cfg::kStages) {
      mbarrier_init(Layout::full(base, tid), WsProducer<T, Cfg>::kFullArrivals);
      mbarrier_init(Layout::empty(base, tid), Cfg::kConsumerWarps);
    }
    __syncthreads();
  }

  // Work `work` of the grid (work item work / n_tiles, N tile work % n_tiles).
  static __device__ __forceinline__ RingCta at(const TcKernelParams& p, int64_t work) {
    RingCta c;
    const int tid = threadIdx.x;
    c.lane = tid & 31;
    c.warp = __shfl_sync(0xffffffffu, tid >> 5, 0);
    c.producer = c.warp >= Cfg::kConsumerWarps;
    c.n_tile = work % p.n_tiles;
    c.n0 = c.n_tile * Cfg::kTN;
    c.item = p.items[work / p.n_tiles];
    c.stages = __shfl_sync(0xffffffffu, (c.item.entry_end - c.item.entry_begin + Cfg::kKS - 1) / Cfg::kKS, 0);
    return c;
  }

  // Where the stage after `stages` more from `ring` sits: slot ring % STAGES of the ring's pass
  // parity ring / STAGES (a ring position in [0, 2 STAGES)).
  static __device__ __forceinline__ int advance(int ring, int64_t stages) {
    return int((ring + stages % (2 * Cfg::kStages)) % (2 * Cfg::kStages));
  }

  // A CTA with one work item, blockIdx.x's.
  static __device__ __forceinline__ RingCta start(const TcKernelParams& p, uint32_t base) {
    const RingCta c = at(p, blockIdx.x);
    init_ring(base);
    return c;
  }

  // Split items combine their partial tiles; then each consumer warp stores its kRB block rows x kNT
  // 8-column tiles (warp = wm * WN + wn) to C.
  template <int kRB, int kNT>
  __device__ __forceinline__ void finish(const TcKernelParams& p, typename T::AccTile (&acc)[kRB][kNT],
                                         int& last_to_arrive) const {
    if (item.chunks > 1) {
      constexpr int64_t kTile = int64_t(Cfg::kConsumerWarps) * 32 * kRB * kNT * T::kAccPerTile;
      if (!combine_split_chunks<T, kRB, kNT, kTile>(p, item, n_tile, acc, !producer, warp, lane, last_to_arrive))
        return;
    }
    if (producer) return;
    const int wm = warp / Cfg::kWN, wn = warp % Cfg::kWN;
    store_tile<T, kRB, kNT>(p, acc, int64_t(item.panel) * Cfg::kG * T::kBlockH + wm * kRB * T::kBlockH,
                            n0 + wn * kNT * 8, lane);
  }
};

// A consumer warp of the kernel below: block rows g0 .. g0 + RB - 1 of the panel, NT 8-column tiles
// from column wn * NT * 8 of the N tile. kDenseStages: stages where every entry has all of the warp's
// blocks run without tests per entry (for operands of mostly such entries; elsewhere the test per
// stage costs more than it saves).
template <class T, class Cfg, bool kDenseStages>
struct WsConsumer {
  using Layout = WsLayout<T, Cfg>;
  using AccTile = typename T::AccTile;
  static constexpr int kRB = Cfg::kRB, kNT = Cfg::kNT, kKS = Cfg::kKS;
  static constexpr uint32_t kAllRows = (1u << kRB) - 1u;

  uint32_t base, a_lane, b_lane;
  int g0, nt_live;
  bool all_live;  // every tile of the warp holds columns < n
  int slot;
  uint32_t parity;  // of the `full` barriers
  WarpFragments<T, kRB, kNT> frag[2];

  // cols_left: n minus the CTA tile's first column; ring: where the item's stage 0 sits on the ring
  // (RingCta::advance).
  __device__ __forceinline__ WsConsumer(uint32_t base_, int wm, int wn, int lane, int64_t cols_left, int ring)
      : base(base_), a_lane(T::a_lane(lane)), b_lane(T::template b_lane<Cfg::kTN, false>(wn * kNT * 8, lane)),
        g0(wm * kRB), nt_live(live_mma_tiles<kNT>(wn * kNT * 8, cols_left)), all_live(nt_live == kNT),
        slot(ring % Cfg::kStages), parity(uint32_t(ring / Cfg::kStages)) {}

  // This warp's bits of the masks of the entries in `slot` (once its `full` barrier has completed).
  __device__ __forceinline__ void masks_of(int slot_, uint32_t (&mine)[kKS]) const {
#pragma unroll
    for (int j = 0; j < kKS; ++j) mine[j] = (lds_u32(Layout::mask(base, slot_, j)) >> g0) & kAllRows;
  }

  // Stage s's MMAs, each entry's fragments loaded before the previous entry's MMAs (the next stage's
  // first entry once this stage's fragments are all in registers, which is when the stage goes back
  // to the producers). kDense: every entry of the stage has all of the warp's blocks and all its tiles
  // are live, so nothing is tested per entry (banded and blocked matrices).
  template <bool kDense>
  __device__ __forceinline__ void stage(AccTile (&acc)[kRB][kNT], int64_t s, int64_t stages, int lane,
                                        const uint32_t (&now)[kKS], uint32_t (&next)[kKS]) {
#pragma unroll
    for (int j = 0; j < kKS; ++j) {
      if (j + 1 < kKS) {
        if constexpr (kDense)
          frag[(j + 1) & 1].template load_all<Cfg::kTN, false, Layout>(base, slot, j + 1, g0, a_lane, b_lane);
        else
          frag[(j + 1) & 1].template load<Cfg::kTN, false, Layout>(base, slot, j + 1, g0, now[j + 1], a_lane, b_lane);
      } else {
        __syncwarp();
        if (lane == 0) mbarrier_arrive(Layout::empty(base, slot));
        if (++slot == Cfg::kStages) {
          slot = 0;
          parity ^= 1u;
        }
        if (s + 1 < stages) {
          mbarrier_wait(Layout::full(base, slot), parity);
          masks_of(slot, next);
          frag[0].template load<Cfg::kTN, false, Layout>(base, slot, 0, g0, next[0], a_lane, b_lane);
        }
      }
      if constexpr (kDense)
        frag[j & 1].multiply_all(acc);
      else
        frag[j & 1].multiply(acc, now[j], all_live, nt_live);
    }
  }

  __device__ __forceinline__ void run(AccTile (&acc)[kRB][kNT], int64_t stages, int lane) {
    uint32_t mine[kKS];
    mbarrier_wait(Layout::full(base, slot), parity);
    masks_of(slot, mine);
    frag[0].template load<Cfg::kTN, false, Layout>(base, slot, 0, g0, mine[0], a_lane, b_lane);
    for (int64_t s = 0; s < stages; ++s) {
      uint32_t next[kKS] = {};  // stage s + 1's, read once its barrier has completed
      uint32_t every = kAllRows;
#pragma unroll
      for (int j = 0; j < kKS; ++j) every &= mine[j];
      if (kDenseStages && all_live && every == kAllRows)
        stage<kDenseStages>(acc, s, stages, lane, mine, next);
      else
        stage<false>(acc, s, stages, lane, mine, next);
#pragma unroll
      for (int j = 0; j < kKS; ++j) mine[j] = next[j];
    }
  }
};

// Grid: one CTA per work item and N tile (p.work of them, N tile fastest), or p.loop_ctas CTAs that
// loop over them (work blockIdx.x, + gridDim.x, ...): a looping CTA's producers go on to its next
// work item while its consumers store the last one's C tile, so the next item's first stages are in
// flight by then. Split items' chunks meet at CTA barriers (combine_split_chunks): the host loops only
// over lists without them.
template <class T, class Cfg, bool kDenseStages>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinCtas) tc_spmm_ws_kernel(const TcKernelParams p) {
  using Layout = WsLayout<T, Cfg>;
  using AccTile = typename T::AccTile;
  constexpr int kRB = Cfg::kRB, kNT = Cfg::kNT;
  extern __shared__ __align__(128) unsigned char smem[];
  __shared__ int last_to_arrive;
  const uint32_t base = Layout::base_of(smem);

  RingCta<T, Cfg>::init_ring(base);
  int ring = 0;  // where the next work item's first stage sits on the ring (RingCta::advance)
  for (int64_t work = blockIdx.x; work < p.work; work += gridDim.x) {
    const RingCta<T, Cfg> cta = RingCta<T, Cfg>::at(p, work);
    const int lane = cta.lane, warp = cta.warp;
    const int wm = warp / Cfg::kWN, wn = warp % Cfg::kWN;
    const int64_t n0 = cta.n0, stages = cta.stages;

    AccTile acc[kRB][kNT];
    if (cta.producer) {
      WsProducer<T, Cfg>::run(p, cta.item, n0, base, warp - Cfg::kConsumerWarps, lane, stages, ring);
    } else if (stages > 0) {
      WsConsumer<T, Cfg, kDenseStages> consumer(base, wm, wn, lane, p.n - n0, ring);
      consumer.run(acc, stages, lane);
    }
    ring = RingCta<T, Cfg>::advance(ring, stages);
    cta.template finish<kRB, kNT>(p, acc, last_to_arrive);
  }
}

}  // namespace sparsetc::detail::tc
