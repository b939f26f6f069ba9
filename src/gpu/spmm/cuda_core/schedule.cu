// Plan-time work decompositions of the CUDA-core SpMM kernels: the column tiling, the row classes
// of the C-stationary kernel (short, medium, long; DCSR's empty rows) and the CTAs of the
// B-stationary kernel. Built once on the device; only counts are read back.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/device_properties.hpp"
#include "gpu/spmm/cuda_core/cuda_core_spmm.hpp"
#include "gpu/spmm/cuda_core/reuse_gaps.hpp"
#include "gpu/spmm/cuda_core/row_shape.hpp"

namespace sparsetc::detail {
namespace {

namespace gc = gpuconv;

constexpr int64_t kStepsPerWarp = 8;         // steps of kUnroll entries a row takes in a stream or group
constexpr int64_t kMaxStepsPerRowWarp = 64;  // most steps a row may take in a warp of its own
constexpr int64_t kUnrollEntries = cudacore::kUnroll;  // entries a lane takes per step
constexpr int64_t kCtaWarps = cudacore::kRowWarps;     // warps of a long row's CTA
constexpr int64_t kWarpsPerSm = 32;  // the scale warp_limit was fitted with (H200: 132 SMs of 32 warps)

// Narrow column tiles (row_tile_lanes): where a tile's rows of B outgrow the share of L2 it can
// count on (half: the H100's and H200's L2 is two partitions) and rows are short (the kernel then
// visits the entries about in stored order), tiles whose rows of B take kNarrowRowBytes, when the
// share of entries reusing a row of B within that cache (ReuseGaps) rises by kNarrowMinGain. H200
// (docs/performance.md, "Narrow column tiles"): 128-byte rows were the fastest width on uniform
// 200k x 16 in f16 and f32 (64-byte ones lost), 1.29x (f16) and 1.68x (f32) at N = 512, the share
// up by 0.39 and 0.49; on R-MAT 2^18 (up by 0.15-0.26: its hub columns hit already) narrower tiles
// were 1.1-1.4x slower.
constexpr int64_t kNarrowRowBytes = 128;
constexpr double kNarrowMaxMeanRow = 32;
constexpr double kNarrowL2Share = 0.5;
constexpr double kNarrowMinGain = 0.33;

int log2_of(int64_t power_of_two) {
  int log = 0;
  while ((int64_t(1) << log) < power_of_two) ++log;
  return log;
}

// Lanes across a row's entries: enough that each takes about lane_entries of an average row, as
// many as the warp has beside the column lanes.
int lanes_k_log_for(double mean_entries, int lanes_n_log, int64_t lane_entries = kUnrollEntries) {
  const int max_log = 5 - lanes_n_log;
  int log = 0;
  while (log < max_log && double(lane_entries << log) < mean_entries) ++log;
  return log;
}

struct LengthBetween {  // row_limit < entries <= upper
  const int64_t* row_ptr;
  int64_t lower, upper;
  __device__ bool operator()(int64_t u) const {
    const int64_t length = row_ptr[u + 1] - row_ptr[u];
    return length > lower && length <= upper;
  }
};

struct EmptyRow {
  const int64_t* row_ptr;
  __device__ bool operator()(int64_t r) const { return row_ptr[r + 1] == row_ptr[r]; }
};

// chunks[l]: CTA chunks of long row l; partials[l]: the same when there are 2 or more, else 0.
struct ChunkCounts {
  const int64_t* row_ptr;
  const int64_t* long_unit;
  int64_t chunk_entries;
  int64_t* chunks;
  int64_t* partials;
  __device__ void operator()(int64_t l) const {
    const int64_t u = long_unit[l];
    const int64_t count = (row_ptr[u + 1] - row_ptr[u] + chunk_entries - 1) / chunk_entries;
    chunks[l] = count;
    partials[l] = count > 1 ? count : 0;
  }
};

// CTAs of strip s: its segments plus entries over the budget, rounded up (0 for an empty strip).
struct StripItems {
  const int64_t* strip_ptr;
  const int64_t* row_ptr;
  int64_t budget;
  int64_t* items;
  __device__ void operator()(int64_t s) const {
    const int64_t q0 = strip_ptr[s], q1 = strip_ptr[s + 1];
    const int64_t cost = (q1 + row_ptr[q1]) - (q0 + row_ptr[q0]);
    items[s] = (cost + budget - 1) / budget;
  }
};

// Positions where pred holds, in an exactly sized buffer; returns their count (a read-back).
template <typename Pred>
int64_t select_into(int64_t n, Pred pred, DeviceBuffer& out, const GpuContext& context) {
  if (n <= 0) return 0;
  DeviceBuffer all = gc::buffer_of<int64_t>(n, context);
  const int64_t count = gc::select_positions(n, pred, all.as<int64_t>(), context);
  out = gc::buffer_of<int64_t>(count, context);
  if (count > 0) copy_device_to_device(out.data(), all.data(), size_t(count) * sizeof(int64_t), context.stream);
  return count;
}

}  // namespace

size_t core_value_bytes(CorePrecision precision) {
  switch (precision) {
    case CorePrecision::f32: return 4;
    case CorePrecision::f64: return 8;
    default: return 2;
  }
}

size_t core_accumulator_bytes(CorePrecision precision) { return precision == CorePrecision::f64 ? 8 : 4; }

sparsetc_value_type_t core_value_type(CorePrecision precision) {
  switch (precision) {
    case CorePrecision::f32: return SPARSETC_VALUE_F32;
    case CorePrecision::f64: return SPARSETC_VALUE_F64;
    case CorePrecision::f16: return SPARSETC_VALUE_F16;
    default: return SPARSETC_VALUE_BF16;
  }
}

bool core_supports_output(CorePrecision precision, sparsetc_value_type_t c_type) {
  switch (precision) {
    case CorePrecision::f32: return c_type == SPARSETC_VALUE_F32;
    case CorePrecision::f64: return c_type == SPARSETC_VALUE_F64;
    case CorePrecision::f16: return c_type == SPARSETC_VALUE_F32 || c_type == SPARSETC_VALUE_F16;
    default: return c_type == SPARSETC_VALUE_F32 || c_type == SPARSETC_VALUE_BF16;
  }
}

CoreColumnTiling core_column_tiling(CorePrecision precision, int64_t n, int vec, int max_lanes) {
  CoreColumnTiling t;
  t.vec = vec > 0 ? vec : int(16 / core_value_bytes(precision));
  const int64_t vectors = (n + t.vec - 1) / t.vec;
  int64_t lanes = 1;
  while (lanes < std::min(max_lanes, 32) && lanes < vectors) lanes *= 2;
  t.lanes_n_log = log2_of(lanes);
  t.tile_width = lanes * t.vec;
  t.tiles = (n + t.tile_width - 1) / t.tile_width;
  return t;
}

// Fitted by bench/scripts/fit_row_rule.py on a schedule sweep of 30 real matrices in f32 and f16
// (H200): on half of them, and checked on the other half (docs/performance.md, "AUTO and the
// C-stationary kernel's schedule"). Session 32 fitted all four buckets; session 33 refitted them
// after the leaner inner loop and took the two buckets where the new values were better on both
// halves (N <= 64: groups from a mean of 24, streams of 8 entries; N > 256: groups from 24, lanes
// of 32). Streams win where rows are short at narrow B; at wide B longer streams amortise each
// stream's start over more bytes.
RowRule row_rule(CorePrecision precision, int64_t n) {
  (void)precision;  // one rule for every precision: f32 and f16 were fitted together
  if (n <= 16) return RowRule{3, 4, 8};
  if (n <= 64) return RowRule{24, 8, 32};
  if (n <= 256) return RowRule{10, 16, 32};
  return RowRule{24, 32, 32};
}

int row_lane_columns(CorePrecision precision, int64_t n, int requested) {
  if (precision == CorePrecision::f64) {
    require(requested == 0 || requested == 2, SPARSETC_STATUS_INVALID_VALUE, "CUDA-core SpMM: ", requested,
            " columns per lane (f64 takes 2)");
    return 2;
  }
  require(requested == 0 || requested == 4 || requested == 8, SPARSETC_STATUS_INVALID_VALUE, "CUDA-core SpMM: ",
          requested, " columns per lane (4 or 8)");
  if (requested > 0) return requested;
  // Eight columns per lane do twice the multiplies per entry's index and address work and keep
  // twice the bytes in flight, at 20-24 warps per SM instead of 32 (kRowMinCtas). Measured on the
  // H200 (30 real matrices, L2 evicted, session 32's schedule sweep): from N = 32 on they beat four
  // in f32 and f16 alike; at N = 8 a row of four-column lanes is two lanes, eight would leave it one.
  return n >= 32 ? 8 : 4;
}

namespace {

// The lanes of a column tile by default: all N needs, or fewer (see kNarrowRowBytes); note says
// what was weighed, where anything was.
int row_tile_lanes(const CoreRows& a, CorePrecision precision, int64_t n, int vec, const GpuContext& context,
                   std::string& note) {
  const CoreColumnTiling full = core_column_tiling(precision, n, vec);
  const int full_lanes = 1 << full.lanes_n_log;
  const int64_t lane_bytes = int64_t(vec) * int64_t(core_value_bytes(precision));
  const int narrow = int(std::max<int64_t>(1, kNarrowRowBytes / lane_bytes));
  if (narrow >= full_lanes || a.units == 0 || double(a.nnz) > kNarrowMaxMeanRow * double(a.units)) return full_lanes;
  const double cache = double(current_device_l2_bytes()) * kNarrowL2Share;
  const double full_row_bytes = double(full.tile_width * int64_t(core_value_bytes(precision)));
  if (double(a.cols) * full_row_bytes <= cache) return full_lanes;
  // The gaps take about 24 bytes of device memory an entry (up to 2^24 entries): where that is not
  // to be had, the plan keeps full tiles rather than fail over a choice of speed.
  ReuseGaps gaps;
  try {
    gaps = column_reuse_gaps(a.col_idx, a.nnz, a.cols, context);
  } catch (const Error& e) {
    if (e.status() != SPARSETC_STATUS_ALLOC_FAILED) throw;
    note = str("column tiles of ", full.tile_width, " columns (their width not weighed: ", e.what(), ")");
    return full_lanes;
  }
  const double hit_full = gaps.reused_within(cache / full_row_bytes);
  const double hit_narrow = gaps.reused_within(cache / double(int64_t(narrow) * lane_bytes));
  const bool take = hit_narrow - hit_full >= kNarrowMinGain;
  note = str("column tiles of ", take ? int64_t(narrow) * vec : full.tile_width, " columns (entries reusing B's row within ",
             int64_t(cache) >> 20, " MB of L2: ", hit_full, " at ", full.tile_width, " columns, ", hit_narrow, " at ",
             int64_t(narrow) * vec, ")");
  return take ? narrow : full_lanes;
}

}  // namespace

RowSchedule make_row_schedule(const CoreRows& a, CorePrecision precision, int64_t n, const int64_t* csr_row_ptr,
                              const GpuContext& context, const RowScheduleOptions& options) {
  RowSchedule s;
  require(options.tile_lanes >= 0 && options.tile_lanes <= 32 && (options.tile_lanes & (options.tile_lanes - 1)) == 0,
          SPARSETC_STATUS_INVALID_VALUE, "CUDA-core SpMM: ", options.tile_lanes,
          " lanes per column tile (a power of two up to 32, or 0 to choose)");
  const int vec = row_lane_columns(precision, n, options.lane_columns);
  const int tile_lanes = options.tile_lanes > 0 ? options.tile_lanes : row_tile_lanes(a, precision, n, vec, context, s.note);
  s.tiling = core_column_tiling(precision, n, vec, tile_lanes);
  const double mean = a.units > 0 ? double(a.nnz) / double(a.units) : 0.0;
  const RowRule rule = row_rule(precision, n);
  const bool groups = options.short_rows == 0 || (options.short_rows < 0 && mean >= rule.group_from_mean);
  if (groups) {
    const int64_t lane_entries = options.lane_entries > 0 ? options.lane_entries : rule.lane_entries;
    s.lanes_k_log = options.lanes_k_log >= 0 ? std::min(options.lanes_k_log, 5 - s.tiling.lanes_n_log)
                                              : lanes_k_log_for(mean, s.tiling.lanes_n_log, lane_entries);
  } else {
    // Short streams: each is a chain of dependent loads, and a wave more of warps costs less than
    // a longer chain (streams sized to fill the device in one wave ran up to 1.3x slower).
    const int64_t stream_entries = options.stream_entries > 0 ? options.stream_entries : rule.stream_entries;
    s.rows_per_stream = options.rows_per_stream > 0
                            ? options.rows_per_stream
                            : std::clamp<int64_t>(std::llround(double(stream_entries) / std::max(mean, 1.0)), 1, 32);
  }
  // A row in a stream or group takes at most kStepsPerWarp steps; longer ones get a warp or more.
  s.row_limit = (kUnrollEntries * kStepsPerWarp) << s.lanes_k_log;
  // A warp takes a row alone up to a number of steps that grows with the whole multiply's work (the
  // steps one resident warp would take), from 8 to 64: splitting a row costs a chain of dependent
  // loads per part, a long warp costs a tail on a small multiply.
  const int64_t warp_lanes_k = int64_t(32) >> s.tiling.lanes_n_log;
  const double work_steps = double(a.nnz) * double(s.tiling.tiles) / double(kUnrollEntries * warp_lanes_k);
  const int64_t warp_steps =
      std::clamp<int64_t>(int64_t(work_steps / double(int64_t(current_device_sm_count()) * kWarpsPerSm)),
                          kStepsPerWarp, kMaxStepsPerRowWarp);
  s.warp_limit = std::max(kUnrollEntries * warp_steps * warp_lanes_k, 2 * s.row_limit);
  const int64_t chunk_entries = kCtaWarps * s.warp_limit;

  s.medium_rows = select_into(a.units, LengthBetween{a.row_ptr, s.row_limit, s.warp_limit}, s.medium_unit, context);
  s.long_rows = select_into(a.units, LengthBetween{a.row_ptr, s.warp_limit, INT64_MAX}, s.long_unit, context);
  if (s.long_rows > 0) {
    DeviceBuffer chunks = gc::buffer_of<int64_t>(s.long_rows, context);
    DeviceBuffer partials = gc::buffer_of<int64_t>(s.long_rows, context);
    gc::for_each_index(s.long_rows, context,
                       ChunkCounts{a.row_ptr, s.long_unit.as<const int64_t>(), chunk_entries, chunks.as<int64_t>(),
                                   partials.as<int64_t>()});
    s.chunk_ptr = gc::buffer_of<int64_t>(s.long_rows + 1, context);
    s.partial_ptr = gc::buffer_of<int64_t>(s.long_rows + 1, context);
    gc::exclusive_scan_total(chunks.as<const int64_t>(), s.chunk_ptr.as<int64_t>(), s.long_rows, context);
    gc::exclusive_scan_total(partials.as<const int64_t>(), s.partial_ptr.as<int64_t>(), s.long_rows, context);
    s.chunks = gc::read_back(s.chunk_ptr.as<const int64_t>() + s.long_rows, context.stream);
    s.partial_chunks = gc::read_back(s.partial_ptr.as<const int64_t>() + s.long_rows, context.stream);
    s.counters = gc::buffer_of<int32_t>(s.long_rows * s.tiling.tiles, context);
    gc::zero(s.counters.as<int32_t>(), s.long_rows * s.tiling.tiles, context.stream);
  }
  if (csr_row_ptr) s.fill_rows = select_into(a.rows, EmptyRow{csr_row_ptr}, s.fill_row, context);
  s.workspace_bytes = size_t(s.partial_chunks) * size_t(s.tiling.tiles) * size_t(s.tiling.tile_width) *
                      core_accumulator_bytes(precision);
  return s;
}

int64_t tiled_strip_width(CorePrecision precision, int64_t n) {
  const CoreColumnTiling t = core_column_tiling(precision, n);
  const int64_t row_bytes = t.tile_width * int64_t(core_value_bytes(precision));
  int64_t width = 32;
  while (width < 512 && 2 * width * row_bytes <= 32768) width *= 2;
  return width;
}

TiledSchedule make_tiled_schedule(const CoreTiled& a, CorePrecision precision, int64_t n, const GpuContext& context) {
  TiledSchedule s;
  s.tiling = core_column_tiling(precision, n);
  const double mean = a.segments > 0 ? double(a.nnz) / double(a.segments) : 0.0;
  s.lanes_k_log = lanes_k_log_for(mean, s.tiling.lanes_n_log);
  // Enough work per CTA to pay for its B tile, and more than one segment's cost (<= strip width + 1).
  s.budget = std::max<int64_t>(2048, 4 * a.strip_width);
  if (a.strips == 0) return s;
  DeviceBuffer items = gc::buffer_of<int64_t>(a.strips, context);
  gc::for_each_index(a.strips, context, StripItems{a.strip_ptr, a.row_ptr, s.budget, items.as<int64_t>()});
  s.item_ptr = gc::buffer_of<int64_t>(a.strips + 1, context);
  gc::exclusive_scan_total(items.as<const int64_t>(), s.item_ptr.as<int64_t>(), a.strips, context);
  s.items = gc::read_back(s.item_ptr.as<const int64_t>() + a.strips, context.stream);
  return s;
}

int64_t csc_window_capacity(CorePrecision precision) {
  // Shared memory beside a B tile of up to 32 KB: 2048 entries of 2-byte columns and 2- or 4-byte
  // values, 1024 of 8-byte values.
  return precision == CorePrecision::f64 ? 1024 : 2048;
}

CscTiledSchedule make_csc_tiled_schedule(const CoreCsc& a, CorePrecision precision, int64_t n,
                                         const GpuContext& context) {
  CscTiledSchedule s;
  s.tiling = core_column_tiling(precision, n);
  s.strip_width = tiled_strip_width(precision, n);
  if (a.nnz == 0 || a.rows == 0 || a.cols == 0) return s;
  require(a.rows <= INT32_MAX && (a.cols - 1) / s.strip_width <= INT32_MAX, SPARSETC_STATUS_SIZE_OVERFLOW,
          "CSC tiled SpMM: ", a.rows, " rows or ", a.cols, " columns exceed the window list's int32 fields");
  std::vector<int64_t> col_ptr(size_t(a.cols + 1));
  std::vector<int32_t> row_idx(size_t(a.nnz));
  copy_device_to_host(col_ptr.data(), a.col_ptr, col_ptr.size() * sizeof(int64_t), context.stream);
  copy_device_to_host(row_idx.data(), a.row_idx, row_idx.size() * sizeof(int32_t), context.stream);

  // Per strip: the entries of each row (a dense counter, reset through the list of touched rows),
  // then the touched rows in order, cut where a window would pass its capacity or its row span.
  const int64_t capacity = csc_window_capacity(precision);
  const int64_t strips = (a.cols - 1) / s.strip_width + 1;
  std::vector<int32_t> count(size_t(a.rows), 0);
  std::vector<int32_t> touched;
  std::vector<CscWindow> windows;
  for (int64_t strip = 0; strip < strips; ++strip) {
    touched.clear();
    const int64_t c_end = std::min(a.cols, (strip + 1) * s.strip_width);
    for (int64_t e = col_ptr[size_t(strip * s.strip_width)]; e < col_ptr[size_t(c_end)]; ++e)
      if (count[size_t(row_idx[size_t(e)])]++ == 0) touched.push_back(row_idx[size_t(e)]);
    if (touched.empty()) continue;
    std::sort(touched.begin(), touched.end());
    s.segments += int64_t(touched.size());
    CscWindow w{int32_t(strip), touched.front(), touched.front(), 0};
    for (const int32_t r : touched) {
      const int32_t entries = count[size_t(r)];
      if (w.entries > 0 && (w.entries + entries > capacity || r - w.row_begin >= kCscWindowRows)) {
        windows.push_back(w);
        w = CscWindow{int32_t(strip), r, r, 0};
      }
      w.entries += entries;
      w.row_end = r + 1;
      count[size_t(r)] = 0;
    }
    windows.push_back(w);
  }
  s.windows = int64_t(windows.size());
  s.lanes_k_log = lanes_k_log_for(double(a.nnz) / double(s.segments), s.tiling.lanes_n_log);
  s.window = DeviceBuffer(windows.size() * sizeof(CscWindow), context);
  copy_host_to_device(s.window.data(), windows.data(), windows.size() * sizeof(CscWindow), context.stream);
  // Pageable source: wait so `windows` may go.
  SPARSETC_CUDA_CHECK(cudaStreamSynchronize(context.stream));
  return s;
}

}  // namespace sparsetc::detail
