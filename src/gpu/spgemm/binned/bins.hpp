// The 38 bins of the binned SpGEMM (Liu & Vinter, JPDC 2015, Algorithm 3) with the thresholds
// re-derived for Hopper (227 KB of shared memory per block). A row of C goes to a bin by its upper
// bound u (the products of its row of A with B); the bin decides the method and the room the row
// gets in the temporary matrix C~. docs/spgemm.md derives every number here.
//
// Usable from host and device code (no CUDA headers needed).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define SPARSETC_HOST_DEVICE __host__ __device__
#else
#define SPARSETC_HOST_DEVICE
#endif

namespace sparsetc::detail::binned {

// Group 1: bin 0 (u = 0, empty row). Group 2: bin 1 (u = 1, one product, written at arrange).
// Group 3: bins 2..32, one per u, heap method with one thread per row (u <= warp size, as in the paper),
//          or ESC in register groups when a u range has few rows (BinnedSpgemmOptions::short_group_warps).
// Group 4: bins 33..36, ESC: bin 33 one warp per row (middle_rows.cu), bins 34..36 the accumulators,
//          then ESC with one block per row in shared memory.
// Group 5: bin 37, merge path, one block per row, progressive capacity.
constexpr int kBins = 38;
constexpr int kHeapMaxBound = 32;
constexpr int kFirstEscBin = 33;
constexpr int kMergeBin = 37;
constexpr int kEscBins = 4;

// Upper bounds of the ESC bins: x4 steps up to the largest power of two whose sort keys (64 bits)
// and product values (fp64) fit one block's 227 KB: 8192 * 16 B = 128 KB (16384 would need 256 KB).
// Bitonic sorts the next power of two of the row's own u, so the bin only sets block size and room.
constexpr int64_t kEscBound[kEscBins] = {128, 512, 2048, 8192};
constexpr int64_t kEscMaxBound = 8192;
static_assert(kEscBound[0] == 128 && kEscBound[1] == 512 && kEscBound[2] == 2048 && kEscBound[3] == kEscMaxBound,
              "bin_of spells these bounds out");

// Rows up to this u may be sorted by one warp in registers (middle_rows.cu): all of bin 33, and the
// rows of bin 34 that its accumulators leave (BinnedSpgemmOptions::wide_rows_in_warps).
constexpr int64_t kWarpEscMaxBound = 256;

// ESC rows of bins 34..36 first go to the shared-memory accumulators (accumulators.cu, one warp a
// row) when they average at least 16 products per row of B met: a dense window when the rows of B
// they meet span at most dense_window_columns columns, a hash table of up to kHashSlots slots when
// u <= kHashSlots and the bin's rows hashed so far compress at least 4:1; the others take the ESC
// sort (docs/spgemm.md gives the measurements behind the rule). A warp's
// scratch holds the table (keys, values, sorted columns) or, in the same bytes, the window (values
// and one flag bit per column): fp32 12 KB (2976 columns), fp64 16 KB (2016 columns).
constexpr int kHashSlotBits = 10;
constexpr int64_t kHashSlots = int64_t(1) << kHashSlotBits;
constexpr int kFirstAccumulatorBin = kFirstEscBin + 1;
SPARSETC_HOST_DEVICE constexpr size_t accumulator_warp_bytes(size_t value_bytes) {
  return size_t(kHashSlots) * (2 * sizeof(int32_t) + value_bytes);
}
SPARSETC_HOST_DEVICE constexpr int64_t dense_window_columns(size_t value_bytes) {
  return int64_t(accumulator_warp_bytes(value_bytes) * 8 / (8 * value_bytes + 1)) / 32 * 32;
}
static_assert(dense_window_columns(4) == 2976 && dense_window_columns(8) == 2016, "documented in docs/spgemm.md");

// Result entries the merge kernel keeps in shared memory (32 KB: four blocks per SM), which is
// also the widest column window of its dense mode (merge_path.cu): fp32 4096, fp64 2048.
SPARSETC_HOST_DEVICE constexpr int64_t merge_dense_columns(size_t value_bytes) {
  return int64_t(32768 / (sizeof(int32_t) + value_bytes)) / 1024 * 1024;
}
static_assert(merge_dense_columns(4) == 4096 && merge_dense_columns(8) == 2048, "documented in docs/spgemm.md");

// Room a merge-path row gets in C~ before it has to grow (paper: 256, the scratchpad working size
// of its GPUs; here twice the merge kernel's 2048-entry shared-memory result).
constexpr int64_t kMergeInitialCapacity = 4096;

SPARSETC_HOST_DEVICE inline int bin_of(int64_t bound, int64_t /*row_of_a_length*/) {
  if (bound <= 1) return int(bound);
  if (bound <= kHeapMaxBound) return int(bound);
  if (bound <= 128) return kFirstEscBin;  // kEscBound, spelled out: device code cannot read the array
  if (bound <= 512) return kFirstEscBin + 1;
  if (bound <= 2048) return kFirstEscBin + 2;
  if (bound <= 8192) return kFirstEscBin + 3;
  return kMergeBin;
}

// Entries of C~ reserved for a row: none for bins 0 and 1 (nothing to merge); for heap and ESC rows
// the upper bound (paper: "upper bound method"), or the width of the row's column span where that
// is less: the columns from the first to the last of the rows of B met, which no row can outnumber
// (FEM rows: bcsstk33 keeps a third of its products' room). Stage 1 measures the span only for rows
// of u > kSpanMinBound (two more loads per entry of A; below, rooms are small anyway) and passes
// span = bound for the others. Merge rows: min(u, initial) (progressive; they grow as they need).
constexpr int64_t kSpanMinBound = 128;
SPARSETC_HOST_DEVICE inline int64_t row_capacity(int bin, int64_t bound, int64_t span, int64_t merge_initial) {
  if (bin <= 1) return 0;
  if (bin < kMergeBin) return span < bound ? span : bound;
  return bound < merge_initial ? bound : merge_initial;
}

// Heap rows run in four kernels by heap size, which is at most min(u, entries of the row of A): a
// row of 5 entries meeting rows of B of 5 (u = 25) needs 5 heap nodes, not 25. Capacities 4..32.
constexpr int kHeapClasses = 4;
SPARSETC_HOST_DEVICE inline int heap_class(int64_t bound, int64_t row_of_a_length) {
  const int64_t nodes = bound < row_of_a_length ? bound : row_of_a_length;
  return nodes <= 4 ? 0 : nodes <= 8 ? 1 : nodes <= 16 ? 2 : 3;
}
SPARSETC_HOST_DEVICE inline int heap_capacity(int heap_class_index) { return 4 << heap_class_index; }

// Key by which stage 2 groups the rows: the bin itself for bins 0, 1 and 33..37, but kShortEscKey
// (32, which no heap row takes) for the rows of bin 33 of u <= kShortEscBound, so they come first
// in the bin's rows, [begin(32), end(33)) (a thread per row may sort them: register_sort.cu); for
// heap rows kHeapKeyBase + class * 31 + (u - 2), so each heap kernel takes one contiguous range,
// ordered by u within it (the paper's 31 bins: neighbouring threads do equal work).
constexpr int kHeapKeyBase = 40;
constexpr int kSortKeys = kHeapKeyBase + kHeapClasses * 31;  // 164 < 256: an 8-bit key
constexpr int kShortEscKey = kFirstEscBin - 1;
constexpr int64_t kShortEscBound = 64;
SPARSETC_HOST_DEVICE inline int sort_key(int bin, int64_t bound, int64_t row_of_a_length) {
  if (bin == kFirstEscBin && bound <= kShortEscBound) return kShortEscKey;
  if (bin < 2 || bin > kHeapMaxBound) return bin;
  return kHeapKeyBase + heap_class(bound, row_of_a_length) * 31 + (bin - 2);
}

// The largest room any one row takes in C~ at the start: what a row panel must at least hold.
constexpr int64_t kMaxRowCapacity = kEscMaxBound > kMergeInitialCapacity ? kEscMaxBound : kMergeInitialCapacity;

}  // namespace sparsetc::detail::binned
