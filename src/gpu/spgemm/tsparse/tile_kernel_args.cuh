// Kernel arguments shared by the tSparse multiplication kernels (.cu files only): a tile operand's
// arrays and the task list with C's bitmaps and output positions, passed by value.
#pragma once

#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

namespace sparsetc::detail::tsparse {

constexpr int kThreads = gpuconv::kThreads;
constexpr int kWarps = kThreads / 32;

struct TileArrays {
  const uint64_t* bitmap;
  const int64_t* offset;
  const void* values;
  const void* values_lo;  // split arithmetic only
};

inline TileArrays arrays_of(const TileOperand& m) {
  return {m.bitmap.as<const uint64_t>(), m.element_offset.as<const int64_t>(), m.values.data(), m.values_lo.data()};
}

struct TaskArrays {
  int64_t tiles;
  const int64_t* tile_pair_ptr;
  const int64_t* pair_a;
  const int64_t* pair_b;
  const uint64_t* c_bitmap;
  const int64_t* row_pos;
};

inline TaskArrays task_arrays(const TileTasks& tasks, const uint64_t* bitmap, const int64_t* row_pos) {
  return {tasks.tiles, tasks.tile_pair_ptr.as<const int64_t>(), tasks.pair_a.as<const int64_t>(),
          tasks.pair_b.as<const int64_t>(), bitmap, row_pos};
}

// CTAs of kWarps warps for `warps` warp tasks (grid-stride loops take the rest).
inline unsigned grid_for_warps(int64_t warps) {
  const int64_t ctas = (warps + kWarps - 1) / kWarps;
  return unsigned(ctas < 65536 * 4 ? (ctas > 0 ? ctas : 1) : 65536 * 4);
}

}  // namespace sparsetc::detail::tsparse
