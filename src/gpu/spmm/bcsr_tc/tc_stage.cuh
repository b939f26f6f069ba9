// One pipeline stage of the tensor-core SpMM in shared memory, and the cp.async loader that fills it.
//
// Shared memory: STAGES stages of [A: KS entries x G blocks x 512][B: KS slabs][masks: KS x uint32],
// then a ring of 2 * STAGES stages of entry descriptors (KS x 16 bytes each). The descriptors of a
// stage are copied (cp.async, zero-filled past the item's end: mask 0) in the group committed
// 2 * STAGES - 2 stages before its data is issued, so the data copies never wait on a global load.
// Each thread serves one entry of a stage (thread / (threads / KS)): it copies its share of the
// entry's A blocks (only those present: mask bits) and B slab. B chunks beyond K or N are zero-filled
// by cp.async (src-size); when B or ldb is not 16-byte aligned, chunks are loaded element by element
// and stored to shared memory directly (same bounds, same zeros).
#pragma once

#include <cstdint>
#include <cstring>

#include "gpu/spmm/bcsr_tc/tc_launch.hpp"
#include "gpu/spmm/bcsr_tc/tc_ptx.cuh"
#include "gpu/spmm/bcsr_tc/tc_schedule.hpp"

namespace sparsetc::detail::tc {

inline constexpr int kBlockBytes = 512;  // every precision's A block: 16x16 f16, 16x8 f32, 8x8 f64

template <class T, bool kBColMajor, class Cfg>
struct StageLayout {
  static_assert(T::kBlockH * T::kBlockW * T::kElemBytes == kBlockBytes, "512-byte blocks");
  static constexpr int kEPC = 16 / T::kElemBytes;  // elements per 16-byte chunk
  static constexpr int kSlabBytes =
      kBColMajor ? Cfg::kTN * T::kBColStride : T::kBlockW * T::b_row_stride(Cfg::kTN);
  static constexpr int kAStage = Cfg::kKS * Cfg::kG * kBlockBytes;
  static constexpr int kBStage = Cfg::kKS * kSlabBytes;
  static constexpr int kStageBytes = (kAStage + kBStage + Cfg::kKS * 4 + 127) / 128 * 128;
  // Accumulators of the WK - 1 extra warp groups, summed into group 0 through shared memory.
  static constexpr int kAccPerThread = Cfg::kRB * Cfg::kNT * T::kAccPerTile;
  static constexpr int kReduceBytes =
      (Cfg::kWK - 1) * Cfg::kWM * Cfg::kWN * 32 * kAccPerThread * int(sizeof(typename T::Acc));
  static constexpr int kDescSlots = 2 * Cfg::kStages;
  static constexpr int kDescOffset = Cfg::kStages * kStageBytes > kReduceBytes ? Cfg::kStages * kStageBytes
                                                                                : kReduceBytes;
  static constexpr int kSmemBytes = kDescOffset + kDescSlots * Cfg::kKS * int(sizeof(TcEntry));

  static __device__ __forceinline__ uint32_t a_block(uint32_t base, int slot, int entry, int g) {
    return base + slot * kStageBytes + (entry * Cfg::kG + g) * kBlockBytes;
  }
  static __device__ __forceinline__ uint32_t slab(uint32_t base, int slot, int entry) {
    return base + slot * kStageBytes + kAStage + entry * kSlabBytes;
  }
  static __device__ __forceinline__ uint32_t* masks(unsigned char* smem, int slot) {
    return reinterpret_cast<uint32_t*>(smem + slot * kStageBytes + kAStage + kBStage);
  }
  // Descriptor of entry j of stage s.
  static __device__ __forceinline__ uint32_t desc(uint32_t base, int64_t s, int j) {
    return base + kDescOffset + (int(s % kDescSlots) * Cfg::kKS + j) * int(sizeof(TcEntry));
  }
};

template <class T, bool kBColMajor, class Cfg>
struct StageLoader {
  using Layout = StageLayout<T, kBColMajor, Cfg>;
  using Value = typename T::Value;
  static constexpr int kEPC = Layout::kEPC;
  static constexpr int kThreadsPerEntry = Cfg::kThreads / Cfg::kKS;
  static constexpr int kBlockChunks = kBlockBytes / 16;
  static constexpr int kAIters = Cfg::kG * kBlockChunks / kThreadsPerEntry;
  // B slab: kLines lines (rows of B, or columns for column-major B) of kChunksPerLine chunks.
  static constexpr int kChunksPerLine = kBColMajor ? T::kBlockW / kEPC : Cfg::kTN / kEPC;
  static constexpr int kLines = kBColMajor ? Cfg::kTN : T::kBlockW;
  static constexpr int kLineStep = kThreadsPerEntry / kChunksPerLine;  // lines per iteration
  static constexpr int kBIters = (kLines + kLineStep - 1) / kLineStep;
  static constexpr int kLineBytes = kBColMajor ? T::kBColStride : T::b_row_stride(Cfg::kTN);
  static_assert(kThreadsPerEntry % kBlockChunks == 0 && (Cfg::kG * kBlockChunks) % kThreadsPerEntry == 0,
                "whole A blocks per pass");
  static_assert(kThreadsPerEntry % kChunksPerLine == 0, "whole B lines per pass");

  const TcKernelParams& p;
  const unsigned char* values;
  int entry;  // this thread's entry within a stage
  int task;   // this thread's index among the entry's threads
  // Per-thread constants of the copies (the same chunk positions every stage).
  int a_g0;            // first block row this thread copies
  uint32_t a_dst;      // its chunk's swizzled offset in block a_g0 of the entry
  uint32_t a_src;      // its chunk's offset in a block of the operand
  int b_line0;         // first slab line
  uint32_t b_dst;      // its chunk's offset in the slab (line b_line0)
  int64_t b_src;       // row-major: n0 + chunk column; column-major: (n0 + b_line0) * ldb + chunk row
  int b_fixed;         // row-major: valid elements of the chunk's columns (< n); column-major: its first row
  int64_t b_cols_left; // column-major: columns of B from this thread's first line on (n - n0 - b_line0)

  __device__ StageLoader(const TcKernelParams& params, int64_t n0, int tid)
      : p(params), values(static_cast<const unsigned char*>(params.values)), entry(tid / kThreadsPerEntry),
        task(tid % kThreadsPerEntry) {
    const int c = task % kBlockChunks;
    a_g0 = task / kBlockChunks;
    a_dst = uint32_t(a_g0 * kBlockBytes + T::a_offset(c / T::kAChunksPerRow, c % T::kAChunksPerRow));
    a_src = uint32_t(c * 16);
    const int bc = task % kChunksPerLine;
    b_line0 = task / kChunksPerLine;
    b_dst = uint32_t(b_line0 * kLineBytes + bc * 16);
    if constexpr (kBColMajor) {
      b_src = (n0 + b_line0) * p.ldb + bc * kEPC;
      b_fixed = bc * kEPC;
      b_cols_left = p.n - (n0 + b_line0);
    } else {
      b_src = n0 + bc * kEPC;
      b_fixed = int(min(max(p.n - b_src, int64_t(0)), int64_t(kEPC)));
      b_cols_left = 0;
    }
  }

  // Copies the descriptors of stages [s0, s0 + count) into the ring (threads 0 .. count * KS - 1, one each).
  __device__ __forceinline__ void load_descriptors(uint32_t base, const TcWorkItem& item, int64_t s0, int count,
                                                   int tid) const {
    if (tid < count * Cfg::kKS) {
      const int64_t s = s0 + tid / Cfg::kKS;
      const int j = tid % Cfg::kKS;
      const int64_t e = item.entry_begin + s * Cfg::kKS + j;
      const bool valid = e < item.entry_end;
      cp_async_16(Layout::desc(base, s, j), p.entries + (valid ? e : 0), valid ? 16 : 0);
    }
  }

  // Issues the copies of stage s into `slot` (its descriptors are in the ring).
  __device__ __forceinline__ void issue(unsigned char* smem, uint32_t base, int64_t s, int slot) const {
    TcEntry d;
    {
      uint4 raw;
      asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(raw.x), "=r"(raw.y), "=r"(raw.z), "=r"(raw.w)
                   : "r"(Layout::desc(base, s, entry)));
      memcpy(&d, &raw, sizeof d);
    }
    if (task == 0) Layout::masks(smem, slot)[entry] = d.mask;
    if (d.mask == 0) return;
    // A blocks of the entry present in the panel, in block-row order from d.first_block.
    const uint32_t a_base = Layout::a_block(base, slot, entry, 0) + a_dst;
    const unsigned char* a_values = values + a_src;
#pragma unroll
    for (int it = 0; it < kAIters; ++it) {
      const int g = a_g0 + it * (kThreadsPerEntry / kBlockChunks);
      if ((d.mask >> g) & 1u) {
        const int64_t block = d.first_block + __popc(d.mask & ((1u << g) - 1u));
        cp_async_16(a_base + it * (kThreadsPerEntry / kBlockChunks) * kBlockBytes, a_values + block * kBlockBytes, 16);
      }
    }
    // The B slab: rows [col_block * width, +width) of B, columns [n0, n0 + TN).
    const uint32_t slab = Layout::slab(base, slot, entry) + b_dst;
    const int64_t k0 = int64_t(d.col_block) * T::kBlockW;
    const Value* b = static_cast<const Value*>(p.b);
    // Row-major: rows of B left from this thread's first line, and its first chunk's offset (one 64-bit
    // multiply per stage; the lines that follow are a fixed stride apart).
    const int64_t rows_left = kBColMajor ? 0 : p.k - k0 - b_line0;
    const int64_t row_offset = kBColMajor ? 0 : (k0 + b_line0) * p.ldb + b_src;
#pragma unroll
    for (int it = 0; it < kBIters; ++it) {
      const int line = b_line0 + it * kLineStep;
      if (kLines % kLineStep == 0 || line < kLines) {
        int64_t offset;
        int valid;
        if constexpr (kBColMajor) {  // line: column n0 + line; chunk: rows k0 + b_fixed ..
          const int64_t k = k0 + b_fixed;
          valid = it * kLineStep < b_cols_left ? int(min(max(p.k - k, int64_t(0)), int64_t(kEPC))) : 0;
          offset = b_src + int64_t(it) * kLineStep * p.ldb + k0;
        } else {  // line: row k0 + line; chunk: columns b_src ..
          valid = it * kLineStep < rows_left ? b_fixed : 0;
          offset = row_offset + int64_t(it * kLineStep) * p.ldb;
        }
        const uint32_t dst = slab + it * kLineStep * kLineBytes;
        if (p.b_aligned) {
          cp_async_16(dst, valid > 0 ? b + offset : b, valid * T::kElemBytes);
        } else {
          Value v[kEPC];
#pragma unroll
          for (int e = 0; e < kEPC; ++e) v[e] = e < valid ? b[offset + e] : Value(0);
          uint4 packed;
          memcpy(&packed, v, 16);
          st_shared_16(dst, packed);
        }
      }
    }
  }
};

}  // namespace sparsetc::detail::tc
