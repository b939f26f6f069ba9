// CSR -> tiled DCSR (vertical strips of strip_width columns, each a DCSR) on the device.
//
// A tiled DCSR is the CSR's (row, strip) segments (the pieces of a row in one strip, contiguous
// in the CSR since a row's columns are sorted), ordered by strip and then by row: a stable sort
// of the segments by strip, as the host does it.
//
// First the segments of every row are counted (one read back: their total). A row within one
// strip is one segment, found from its first and last column; a row of up to kRowWalk entries is
// walked by its thread; a longer one counts an upper bound (row_segments.cuh). Where the strips x
// tiles table of strip_windows.cuh is small, that count is its first kernel, and where every tile
// of 256 rows fits its window (rows near the diagonal), the counting sort of strip_windows.cuh
// places the segments and entries with no further read back. Otherwise two ways, chosen by the
// segments' length:
//
// Long segments (at least kMinRun entries on average): only the segments are sorted, the entries
// move once, in a segmented gather:
//  1. each row lists its segments in CSR order (the same walk as the count): the first entry,
//     the strip, the row and the segment's number; where a row was too long to walk, a select
//     over the entries lists the segment starts instead, and a binary search finds their rows;
//  2. cub::DeviceRadixSort::SortPairs sorts the segment numbers by strip (stable: rows stay in
//     order; only the strip's bits);
//  3. row_ptr is a scan of the lengths in sorted order, row_idx the listed row of each sorted
//     segment, strip_ptr a search per strip in the sorted strips;
//  4. gather_segments (convert_common.cuh) copies every segment's columns and values.
// (Before the rows listed their segments, a select over the entries found the segment starts and
// a binary search in the offsets their rows: 75 and 38 of the band's 310 us under ncu.)
// Short segments (scattered rows: a segment is an entry or two): the entries themselves are
// sorted stably by strip (digit_sort.cuh, one pass of wide digits for up to 2048 strips, straight
// from the CSR arrays), each with its row; a segment starts where the strip or the row changes:
// cub::DeviceSelect::If compacts the starts (one read back: their count), which are row_ptr;
// row_idx comes from the rows, strip_ptr from one binary search per strip.
// (Measured on an H200, 12-14M entries, strips of 4096 and 65536 columns: the entry sort alone
// took 0.44-0.49 ms on banded and stencil matrices, 15-18% of the bandwidth floor, where the
// segment gather takes 0.30-0.37 ms; on uniform random rows, 1-1.4 entries a segment, the entry
// sort took 0.51-0.58 ms and the segment gather 1.2-1.9 ms. The break-even is near 5 entries a
// segment.)
#include <cstdint>

#include <thrust/iterator/transform_iterator.h>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/digit_sort.cuh"
#include "gpu/convert/row_segments.cuh"
#include "gpu/convert/strip_windows.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int64_t kMinRun = 5;                               // entries a segment for the gather
constexpr int64_t kMaxSortedEntries = (int64_t(1) << 33) - 1;  // the entry sort's limit

// ---- the segments of each row

// seg_count[r]: the segments of row r (a thread per row); the rows too long to walk count their
// upper bound and add one to *long_rows.
struct CountRowSegments {
  const int64_t* row_ptr;
  const int32_t* col_idx;
  FastDivider width;
  int64_t* seg_count;
  unsigned long long* long_rows;
  __device__ void operator()(int64_t r) const {
    bool long_row = false;
    seg_count[r] =
        for_each_row_segment(row_ptr, col_idx, r, width, &long_row, [](int64_t, int64_t, int64_t, uint32_t) {});
    if (long_row) atomicAdd(long_rows, 1ull);
  }
};

// The listed segments (CSR order): first entry, strip (the sort key), number (the sorted
// payload), row; first[segments] = nnz closes the last one.
struct ListedSegments {
  int64_t* first;
  uint32_t* strip;
  int64_t* number;
  int32_t* row;
};

// Row r's segments into `out` from row_first_segment[r] on (a thread per row; no row is long);
// the last row closes first.
struct ListRowSegments {
  const int64_t* row_ptr;
  const int32_t* col_idx;
  FastDivider width;
  const int64_t* row_first_segment;
  int64_t rows, nnz;
  ListedSegments out;
  __device__ void operator()(int64_t r) const {
    const int64_t q0 = row_first_segment[r];
    bool long_row = false;
    for_each_row_segment(row_ptr, col_idx, r, width, &long_row, [&](int64_t k, int64_t j, int64_t, uint32_t s) {
      out.first[q0 + k] = j;
      out.strip[q0 + k] = s;
      out.number[q0 + k] = q0 + k;
      out.row[q0 + k] = int32_t(r);
    });
    if (r == rows - 1) out.first[row_first_segment[rows]] = nnz;
  }
};

// ---- long segments: sort the segments, gather the entries

// With rows too long to walk, the segments are selected from the entries instead.
// Sets bit row_ptr[r] of `bits` for every non-empty row r.
struct MarkRowStarts {
  const int64_t* row_ptr;
  uint32_t* bits;
  __device__ void operator()(int64_t r) const {
    const int64_t a = row_ptr[r];
    if (a < row_ptr[r + 1]) atomicOr(bits + (a >> 5), 1u << (a & 31));
  }
};

// Entry j starts a segment: it starts its row, or its strip differs from entry j - 1's (entry 0
// starts a row).
struct SegmentStart {
  const int32_t* col_idx;
  const uint32_t* row_starts;
  FastDivider width;
  __device__ bool operator()(int64_t j) const {
    return ((row_starts[j >> 5] >> (j & 31)) & 1u) ||
           width.divide(uint32_t(__ldg(col_idx + j))) != width.divide(uint32_t(__ldg(col_idx + j - 1)));
  }
};

// Segment q of the selected starts (first, CSR order): its strip, number and row (a binary
// search in the offsets); first[segments] = nnz closes the last one.
struct SelectedSegmentFields {
  const int64_t* row_ptr;
  int64_t rows;
  const int32_t* col_idx;
  FastDivider width;
  int64_t segments, nnz;
  ListedSegments out;  // out.first holds the starts
  __device__ void operator()(int64_t q) const {
    const int64_t j = out.first[q];
    out.strip[q] = width.divide(uint32_t(col_idx[j]));
    out.number[q] = q;
    out.row[q] = int32_t(last_not_above(row_ptr, 0, rows, j));
    if (q == 0) out.first[segments] = nnz;
  }
};

// Length of the k-th segment in sorted order.
struct SortedLength {
  const int64_t* first;
  const int64_t* number;
  __device__ int64_t operator()(int64_t k) const {
    const int64_t q = number[k];
    return first[q + 1] - first[q];
  }
};

// row_idx[k]: the row of the k-th segment in sorted order.
struct SortedRow {
  const int32_t* row;
  const int64_t* number;
  int32_t* row_idx;
  __device__ void operator()(int64_t k) const { row_idx[k] = __ldg(row + __ldg(number + k)); }
};

// strip_ptr[s]: the segments of the strips below s (a search in the sorted strips).
struct StripPtr {
  const uint32_t* sorted_strip;
  int64_t segments;
  int64_t* strip_ptr;
  __device__ void operator()(int64_t s) const { strip_ptr[s] = lower_bound(sorted_strip, 0, segments, s); }
};

// The k-th segment in sorted order starts at input entry first[number[k]].
struct SortedSource {
  const int64_t* first;
  const int64_t* number;
  __device__ int64_t operator()(int64_t k) const { return __ldg(first + __ldg(number + k)); }
};

// row_first_segment: the scanned segment counts of the rows, exact when no row is long.
template <typename V>
void tiled_by_segments(const DeviceCsrView<V>& csr, FastDivider width, const int64_t* row_first_segment,
                       int64_t segments, bool long_rows, DeviceTiledDcsr<V>& tiled, const GpuContext& context) {
  const int64_t strips = tiled.strips(), nnz = csr.nnz;
  // 1. The segments in CSR order, with their keys.
  DeviceBuffer first, rows, keys, numbers;
  auto allocate = [&] {
    rows = buffer_of<int32_t>(segments, context);
    keys = buffer_of<uint32_t>(2 * segments, context);
    numbers = buffer_of<int64_t>(2 * segments, context);
    return ListedSegments{first.as<int64_t>(), keys.as<uint32_t>(), numbers.as<int64_t>(), rows.as<int32_t>()};
  };
  if (!long_rows) {
    first = buffer_of<int64_t>(segments + 1, context);
    for_each_index(csr.rows, context,
                   ListRowSegments{csr.row_ptr, csr.col_idx, width, row_first_segment, csr.rows, nnz, allocate()});
  } else {
    DeviceBuffer row_starts = buffer_of<uint32_t>((nnz + 31) / 32, context);
    zero(row_starts.as<uint32_t>(), (nnz + 31) / 32, context.stream);
    for_each_index(csr.rows, context, MarkRowStarts{csr.row_ptr, row_starts.as<uint32_t>()});
    first = buffer_of<int64_t>(nnz + 1, context);
    segments = select_positions(nnz, SegmentStart{csr.col_idx, row_starts.as<const uint32_t>(), width},
                                first.as<int64_t>(), context);
    for_each_index(segments, context,
                   SelectedSegmentFields{csr.row_ptr, csr.rows, csr.col_idx, width, segments, nnz, allocate()});
  }
  tiled.row_segments = segments;
  uint32_t* strip_in = keys.as<uint32_t>();
  uint32_t* strip_out = strip_in + segments;
  int64_t* number_in = numbers.as<int64_t>();
  int64_t* number_out = number_in + segments;
  // 2. Stable sort of the segments by strip.
  const int key_bits = bits_for(uint64_t(strips));
  if (key_bits > 0) {
    run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceRadixSort::SortPairs(temp, bytes, strip_in, strip_out, number_in, number_out, segments, 0,
                                               key_bits, context.stream);
    });
  } else {  // one strip: already in order
    strip_out = strip_in;
    number_out = number_in;
  }
  // 3. The structure.
  tiled.row_ptr = buffer_of<int64_t>(segments + 1, context);
  tiled.row_idx = buffer_of<int32_t>(segments, context);
  int64_t* row_ptr = tiled.row_ptr.template as<int64_t>();
  zero(row_ptr, 1, context.stream);
  const auto lengths = thrustns::make_transform_iterator(thrustns::counting_iterator<int64_t>(0),
                                                         SortedLength{first.as<const int64_t>(), number_out});
  run_cub("cub::DeviceScan::InclusiveSum", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceScan::InclusiveSum(temp, bytes, lengths, row_ptr + 1, segments, context.stream);
  });
  for_each_index(segments, context,
                 SortedRow{rows.as<const int32_t>(), number_out, tiled.row_idx.template as<int32_t>()});
  for_each_index(strips + 1, context, StripPtr{strip_out, segments, tiled.strip_ptr.template as<int64_t>()});
  // 4. The entries.
  gather_segments(row_ptr, segments, nnz, SortedSource{first.as<const int64_t>(), number_out}, NoSegmentVisit{},
                  csr.col_idx, csr.values, tiled.col_idx.template as<int32_t>(), tiled.values.template as<V>(),
                  context);
}

// ---- short segments: sort the entries (the sort writes col_idx, values and each entry's row)

struct SortedSegmentStart {
  const uint32_t* cols;
  const uint32_t* rows;
  FastDivider width;
  __device__ bool operator()(int64_t p) const {
    return p == 0 || width.divide(cols[p]) != width.divide(cols[p - 1]) || rows[p] != rows[p - 1];
  }
};

struct SortedSegmentFields {
  const int64_t* seg_first;
  int64_t segments, nnz;
  const uint32_t* rows;
  int64_t* row_ptr;
  int32_t* row_idx;
  __device__ void operator()(int64_t q) const {
    if (q == segments) {
      row_ptr[q] = nnz;
      return;
    }
    const int64_t p = seg_first[q];
    row_ptr[q] = p;
    row_idx[q] = int32_t(rows[p]);
  }
};

// strip_ptr[s] = number of segments whose strip is below s (a search in the sorted entries).
struct SortedStripPtr {
  const int64_t* seg_first;
  int64_t segments;
  const uint32_t* cols;
  FastDivider width;
  int64_t* strip_ptr;
  __device__ void operator()(int64_t s) const {
    int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      if (int64_t(width.divide(cols[seg_first[mid]])) < s) lo = mid + 1;
      else hi = mid;
    }
    strip_ptr[s] = lo;
  }
};

template <typename V>
void tiled_by_entry_sort(const DeviceCsrView<V>& csr, FastDivider width, DeviceTiledDcsr<V>& tiled,
                         const GpuContext& context) {
  using W = word_t<V>;
  require(csr.nnz <= kMaxSortedEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR on the GPU takes at most 2^33 "
          "entries of short segments, not ", csr.nnz);
  const int64_t strips = tiled.strips();
  DeviceBuffer rows = buffer_of<uint32_t>(csr.nnz, context);
  SortSink<W> sink;
  sink.col = reinterpret_cast<uint32_t*>(tiled.col_idx.data());
  sink.row = rows.as<uint32_t>();
  sink.val = tiled.values.template as<W>();
  sort_entries(CsrSource<int64_t, W>{csr.row_ptr, csr.col_idx, reinterpret_cast<const W*>(csr.values), csr.rows, 0},
               csr.nnz, width, bits_for(uint64_t(strips)), sink, context);
  const uint32_t* cols = reinterpret_cast<const uint32_t*>(tiled.col_idx.data());
  DeviceBuffer seg_first = buffer_of<int64_t>(csr.nnz, context);
  tiled.row_segments = select_positions(csr.nnz, SortedSegmentStart{cols, rows.as<const uint32_t>(), width},
                                        seg_first.as<int64_t>(), context);
  tiled.row_ptr = buffer_of<int64_t>(tiled.row_segments + 1, context);
  tiled.row_idx = buffer_of<int32_t>(tiled.row_segments, context);
  for_each_index(tiled.row_segments + 1, context,
                 SortedSegmentFields{seg_first.as<const int64_t>(), tiled.row_segments, csr.nnz,
                                     rows.as<const uint32_t>(), tiled.row_ptr.template as<int64_t>(),
                                     tiled.row_idx.template as<int32_t>()});
  for_each_index(strips + 1, context,
                 SortedStripPtr{seg_first.as<const int64_t>(), tiled.row_segments, cols, width,
                                tiled.strip_ptr.template as<int64_t>()});
}

}  // namespace

template <typename V>
DeviceTiledDcsr<V> csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context,
                                     const TiledOptions& options) {
  require(strip_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "strip width ", strip_width, " must be positive");
  require(csr.rows <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR rows ", csr.rows, " exceed int32");
  DeviceTiledDcsr<V> tiled;
  tiled.rows = csr.rows;
  tiled.cols = csr.cols;
  tiled.strip_width = strip_width;
  tiled.nnz = csr.nnz;
  const int64_t strips = tiled.strips();
  // Columns are below 2^31, so a strip of 2^31 columns or more is one strip: every column divides to 0.
  const FastDivider width(uint32_t(strip_width < int64_t(0x80000000u) ? strip_width : int64_t(0x80000000u)));
  // Near-diagonal structures: the counting sort by strip windows (strip_windows.cuh), where its
  // table is small enough. Its count, launched before the outputs are allocated, also gives each
  // row's segments, for the other ways.
  const int64_t tiles = (csr.rows + kWindowRows - 1) / kWindowRows;
  const bool windows = options.strip_windows && csr.nnz > 0 && strips <= kMaxWindowTable / tiles &&
                       csr.nnz <= kMaxWindowEntries;
  StripWindowCount count;
  if (windows) count = count_strip_windows(csr.row_ptr, csr.col_idx, csr.rows, width, strips, context);
  tiled.strip_ptr = buffer_of<int64_t>(strips + 1, context);
  tiled.col_idx = buffer_of<int32_t>(csr.nnz, context);
  tiled.values = buffer_of<V>(csr.nnz, context);
  if (csr.nnz == 0) {
    zero(tiled.strip_ptr.template as<int64_t>(), strips + 1, context.stream);
    tiled.row_ptr = buffer_of<int64_t>(1, context);
    zero(tiled.row_ptr.template as<int64_t>(), 1, context.stream);
    return tiled;
  }
  struct Totals {
    int64_t segments, long_rows;
  } totals{};
  DeviceBuffer row_first_segment;  // the scanned segment counts of the rows, + total, long rows
  if (windows) {
    const StripWindowTotals w = read_back(count.verdict(), context.stream);
    totals = Totals{w.segments, w.long_rows};
    if (w.unfit_tiles == 0) {  // (long rows make their tiles unfit)
      tiled.row_segments = totals.segments;
      tiled.row_ptr = buffer_of<int64_t>(totals.segments + 1, context);
      tiled.row_idx = buffer_of<int32_t>(totals.segments, context);
      place_strip_windows(csr.row_ptr, csr.col_idx, csr.values, csr.rows, csr.nnz, width, count, totals.segments,
                          tiled.strip_ptr.template as<int64_t>(), tiled.row_ptr.template as<int64_t>(),
                          tiled.row_idx.template as<int32_t>(), tiled.col_idx.template as<int32_t>(),
                          tiled.values.template as<V>(), context);
      if (options.way) *options.way = TiledWay::kStripWindows;
      return tiled;
    }
    if (csr.nnz >= kMinRun * totals.segments) {
      row_first_segment = buffer_of<int64_t>(csr.rows + 1, context);
      exclusive_scan_total(count.row_segments.as<const int64_t>(), row_first_segment.as<int64_t>(), csr.rows,
                           context);
    }
  } else {
    // The segments of each row, scanned over the rows; the total (an upper bound where rows are
    // long) and the long rows' count come back in one read and pick the way.
    row_first_segment = buffer_of<int64_t>(csr.rows + 2, context);
    int64_t* scanned = row_first_segment.as<int64_t>();
    DeviceBuffer row_segments = buffer_of<int64_t>(csr.rows, context);
    zero(scanned + csr.rows + 1, 1, context.stream);
    for_each_index(csr.rows, context,
                   CountRowSegments{csr.row_ptr, csr.col_idx, width, row_segments.as<int64_t>(),
                                    reinterpret_cast<unsigned long long*>(scanned + csr.rows + 1)});
    exclusive_scan_total(row_segments.as<const int64_t>(), scanned, csr.rows, context);
    totals = read_back(reinterpret_cast<const Totals*>(scanned + csr.rows), context.stream);
  }
  if (csr.nnz >= kMinRun * totals.segments) {
    tiled_by_segments(csr, width, row_first_segment.as<const int64_t>(), totals.segments, totals.long_rows > 0, tiled,
                      context);
    if (options.way) *options.way = TiledWay::kSegmentSort;
  } else {
    tiled_by_entry_sort(csr, width, tiled, context);
    if (options.way) *options.way = TiledWay::kEntrySort;
  }
  return tiled;
}

template DeviceTiledDcsr<float> csr_to_tiled_dcsr<float>(const DeviceCsrView<float>&, int64_t, const GpuContext&,
                                                         const TiledOptions&);
template DeviceTiledDcsr<double> csr_to_tiled_dcsr<double>(const DeviceCsrView<double>&, int64_t, const GpuContext&,
                                                           const TiledOptions&);

}  // namespace gpuconv

template <typename V>
DeviceTiledDcsr<V> gpu_csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context) {
  return gpuconv::csr_to_tiled_dcsr(csr, strip_width, context, gpuconv::TiledOptions{});
}

template DeviceTiledDcsr<float> gpu_csr_to_tiled_dcsr<float>(const DeviceCsrView<float>&, int64_t, const GpuContext&);
template DeviceTiledDcsr<double> gpu_csr_to_tiled_dcsr<double>(const DeviceCsrView<double>&, int64_t,
                                                               const GpuContext&);

}  // namespace sparsetc::detail
