// CSR -> tiled DCSR (vertical strips of strip_width columns, each a DCSR) on the device.
//
// The entries are sorted stably by strip (digit_sort.cuh: one pass of wide digits for up to 2048
// strips, straight from the CSR arrays); CSR order is row-major, so stability leaves each strip in
// (row, column) order, and the sort writes col_idx and values in place, with each entry's row
// beside them. A (strip, row) segment starts where the strip or the row changes:
// cub::DeviceSelect::If compacts the starts (one read back: their count), which are row_ptr;
// row_idx comes from the rows, strip_ptr from one binary search per strip.
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/digit_sort.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int64_t kMaxEntries = (int64_t(1) << 33) - 1;

struct SegmentStart {
  const uint32_t* cols;
  const uint32_t* rows;
  uint32_t width;
  __device__ bool operator()(int64_t p) const {
    return p == 0 || cols[p] / width != cols[p - 1] / width || rows[p] != rows[p - 1];
  }
};

struct SegmentFields {
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

// strip_ptr[s] = number of segments whose strip is below s.
struct StripPtr {
  const int64_t* seg_first;
  int64_t segments;
  const uint32_t* cols;
  uint32_t width;
  int64_t* strip_ptr;
  __device__ void operator()(int64_t s) const {
    int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      if (int64_t(cols[seg_first[mid]] / width) < s) lo = mid + 1;
      else hi = mid;
    }
    strip_ptr[s] = lo;
  }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceTiledDcsr<V> gpu_csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context) {
  using namespace gpuconv;
  using W = word_t<V>;
  require(strip_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "strip width ", strip_width, " must be positive");
  require(csr.rows <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR rows ", csr.rows, " exceed int32");
  require(csr.nnz <= kMaxEntries, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR on the GPU takes at most 2^33 "
          "entries, not ", csr.nnz);
  DeviceTiledDcsr<V> tiled;
  tiled.rows = csr.rows;
  tiled.cols = csr.cols;
  tiled.strip_width = strip_width;
  tiled.nnz = csr.nnz;
  const int64_t strips = tiled.strips();
  tiled.strip_ptr = buffer_of<int64_t>(strips + 1, context);
  tiled.col_idx = buffer_of<int32_t>(csr.nnz, context);
  tiled.values = buffer_of<V>(csr.nnz, context);
  if (csr.nnz == 0) {
    zero(tiled.strip_ptr.template as<int64_t>(), strips + 1, context.stream);
    tiled.row_ptr = buffer_of<int64_t>(1, context);
    zero(tiled.row_ptr.template as<int64_t>(), 1, context.stream);
    return tiled;
  }
  // Columns are below 2^31, so a wider strip is one strip and divides every column to 0.
  const uint32_t width = uint32_t(strip_width < int64_t(0xFFFFFFFFu) ? strip_width : int64_t(0xFFFFFFFFu));
  DeviceBuffer rows = buffer_of<uint32_t>(csr.nnz, context);
  SortSink<W> sink;
  sink.col = reinterpret_cast<uint32_t*>(tiled.col_idx.data());
  sink.row = rows.as<uint32_t>();
  sink.val = tiled.values.template as<W>();
  sort_entries(CsrSource<int64_t, W>{csr.row_ptr, csr.col_idx, reinterpret_cast<const W*>(csr.values), csr.rows, 0},
               csr.nnz, width, bits_for(uint64_t(strips)), sink, context);
  const uint32_t* cols = reinterpret_cast<const uint32_t*>(tiled.col_idx.data());
  DeviceBuffer seg_first = buffer_of<int64_t>(csr.nnz, context);
  tiled.row_segments = select_positions(csr.nnz, SegmentStart{cols, rows.as<const uint32_t>(), width},
                                        seg_first.as<int64_t>(), context);
  tiled.row_ptr = buffer_of<int64_t>(tiled.row_segments + 1, context);
  tiled.row_idx = buffer_of<int32_t>(tiled.row_segments, context);
  for_each_index(tiled.row_segments + 1, context,
                 SegmentFields{seg_first.as<const int64_t>(), tiled.row_segments, csr.nnz, rows.as<const uint32_t>(),
                               tiled.row_ptr.template as<int64_t>(), tiled.row_idx.template as<int32_t>()});
  for_each_index(strips + 1, context,
                 StripPtr{seg_first.as<const int64_t>(), tiled.row_segments, cols, width,
                          tiled.strip_ptr.template as<int64_t>()});
  return tiled;
}

template DeviceTiledDcsr<float> gpu_csr_to_tiled_dcsr<float>(const DeviceCsrView<float>&, int64_t, const GpuContext&);
template DeviceTiledDcsr<double> gpu_csr_to_tiled_dcsr<double>(const DeviceCsrView<double>&, int64_t,
                                                               const GpuContext&);

}  // namespace sparsetc::detail
