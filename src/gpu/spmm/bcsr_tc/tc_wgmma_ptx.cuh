// Thin wrappers over the sm_90a warpgroup MMA (wgmma) of the tensor-core SpMM's wgmma kernel, and the
// matrix descriptor of its B operand. Only in translation units built for sm_90a.
//
// wgmma.mma_async.m64n128k16, both operands from shared memory through descriptors: A (64 x 16)
// K-major, B (16 x 128) N-major (imm-trans-b = 1; tc_slab.cuh). Warp w of the warpgroup holds rows
// 16w..16w+15 of D: its 64 fp32 accumulators are sixteen 16 x 8 tiles, tile t in d[4t..4t+3] with
// the mma.m16n8 accumulator layout (tc_ptx.cuh).
//
// The MMA runs asynchronously: wgmma_fence() before the first one orders earlier register writes
// (the accumulators) before its reads; commit + wait<N> leaves at most N groups in flight;
// fence_accumulators() keeps the compiler from touching the accumulators before a wait.
#pragma once

#include <cstdint>

namespace sparsetc::detail::tc {

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Shared memory written through the generic proxy (cp.async, st.shared) and read next by wgmma (the
// async proxy): the reading threads fence after they acquire the writes (mbarrier wait).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void fence_accumulators(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Matrix descriptor (PTX ISA "Matrix Descriptor Format"): start address, leading and stride byte
// offsets, each >> 4; base offset 0 (swizzled operands start on their pattern's boundary), and the
// swizzle mode (kSwizzle128: 1, none: 0).
inline constexpr uint32_t kNoSwizzle = 0, kSwizzle128 = 1;
__device__ __forceinline__ uint64_t wgmma_descriptor(uint32_t smem_addr, uint32_t leading_bytes, uint32_t stride_bytes,
                                                     uint32_t swizzle) {
  return uint64_t((smem_addr & 0x3FFFFu) >> 4) | (uint64_t(leading_bytes >> 4) << 16) |
         (uint64_t(stride_bytes >> 4) << 32) | (uint64_t(swizzle) << 62);
}

// The 64 accumulator registers of one thread, as asm operands %0..%63.
#define SPARSETC_WGMMA_D_REGS \
  "{" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
#define SPARSETC_WGMMA_D_OPERANDS \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// d += A * B (accumulate != 0) or d = A * B (accumulate == 0); fp32 accumulators. Issued only where
// run != 0 (the same in the whole warpgroup), by a predicate rather than a branch: ptxas serializes
// the MMAs behind a branch that could skip one.
template <bool kBf16>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t a_desc, uint64_t b_desc, int accumulate,
                                                 int run) {
  if constexpr (kBf16) {
    asm volatile(
        "{\n.reg .pred keep, run;\nsetp.ne.b32 keep, %66, 0;\nsetp.ne.b32 run, %67, 0;\n"
        "@run wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " SPARSETC_WGMMA_D_REGS
        "%64, %65, keep, 1, 1, 0, 1;\n}\n"
        : SPARSETC_WGMMA_D_OPERANDS
        : "l"(a_desc), "l"(b_desc), "r"(accumulate), "r"(run));
  } else {
    asm volatile(
        "{\n.reg .pred keep, run;\nsetp.ne.b32 keep, %66, 0;\nsetp.ne.b32 run, %67, 0;\n"
        "@run wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " SPARSETC_WGMMA_D_REGS
        "%64, %65, keep, 1, 1, 0, 1;\n}\n"
        : SPARSETC_WGMMA_D_OPERANDS
        : "l"(a_desc), "l"(b_desc), "r"(accumulate), "r"(run));
  }
}

#undef SPARSETC_WGMMA_D_REGS
#undef SPARSETC_WGMMA_D_OPERANDS

}  // namespace sparsetc::detail::tc
