// CSR -> tiled DCSR (vertical strips of strip_width columns, each a DCSR) on the device.
//
// Entries are stably sorted by strip (cub::DeviceRadixSort on the strip bits only: one pass for up
// to 256 strips), carrying (row << 33 | entry) so rows need no search afterwards; CSR order is
// row-major, so stability leaves each strip in (row, column) order. A (strip, row) segment starts
// where the strip or the row changes: cub::DeviceSelect::If compacts the starts (one read back:
// their count), which are row_ptr; row_idx comes from the carried rows, strip_ptr from one binary
// search per strip, columns and values from one gather per entry. A single strip skips the sort.
#include <cstdint>

#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

constexpr int kEntryBits = 33;
constexpr uint64_t kEntryMask = (uint64_t(1) << kEntryBits) - 1;

struct StripKeys {
  const int32_t* col_idx;
  int64_t strip_width;
  uint32_t* keys;
  uint64_t* carry;
  __device__ void operator()(int64_t j, int64_t i) const {
    keys[j] = uint32_t(__ldg(col_idx + j) / strip_width);
    carry[j] = (uint64_t(i) << kEntryBits) | uint64_t(j);
  }
};

struct SegmentStart {
  const uint32_t* keys;
  const uint64_t* carry;
  __device__ bool operator()(int64_t p) const {
    return p == 0 || keys[p] != keys[p - 1] || (carry[p] >> kEntryBits) != (carry[p - 1] >> kEntryBits);
  }
};

struct SegmentFields {
  const int64_t* seg_first;
  int64_t segments, nnz;
  const uint64_t* carry;
  int64_t* row_ptr;
  int32_t* row_idx;
  __device__ void operator()(int64_t q) const {
    if (q == segments) {
      row_ptr[q] = nnz;
      return;
    }
    const int64_t p = seg_first[q];
    row_ptr[q] = p;
    row_idx[q] = int32_t(carry[p] >> kEntryBits);
  }
};

// strip_ptr[s] = number of segments whose strip is below s.
struct StripPtr {
  const int64_t* seg_first;
  int64_t segments;
  const uint32_t* keys;
  int64_t* strip_ptr;
  __device__ void operator()(int64_t s) const {
    int64_t lo = 0, hi = segments;
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      if (int64_t(keys[seg_first[mid]]) < s) lo = mid + 1;
      else hi = mid;
    }
    strip_ptr[s] = lo;
  }
};

template <typename V>
struct GatherEntries {
  const uint64_t* carry;
  const int32_t* col_idx;
  const V* values;
  int32_t* out_col;
  V* out_val;
  __device__ void operator()(int64_t p) const {
    const int64_t e = int64_t(carry[p] & kEntryMask);
    out_col[p] = col_idx[e];
    out_val[p] = values[e];
  }
};

}  // namespace
}  // namespace gpuconv

template <typename V>
DeviceTiledDcsr<V> gpu_csr_to_tiled_dcsr(const DeviceCsrView<V>& csr, int64_t strip_width, const GpuContext& context) {
  using namespace gpuconv;
  require(strip_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "strip width ", strip_width, " must be positive");
  require(csr.rows <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR rows ", csr.rows, " exceed int32");
  require(csr.nnz <= int64_t(kEntryMask), SPARSETC_STATUS_SIZE_OVERFLOW, "tiled DCSR on the GPU takes at most 2^33 "
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
  DeviceBuffer keys = buffer_of<uint32_t>(csr.nnz, context);
  DeviceBuffer carry = buffer_of<uint64_t>(csr.nnz, context);
  for_each_entry_with_row(csr.row_ptr, csr.rows, csr.nnz, context,
                          StripKeys{csr.col_idx, strip_width, keys.as<uint32_t>(), carry.as<uint64_t>()});
  if (strips > 1) {
    DeviceBuffer sorted_keys = buffer_of<uint32_t>(csr.nnz, context);
    DeviceBuffer sorted_carry = buffer_of<uint64_t>(csr.nnz, context);
    const int end_bit = bits_for(uint64_t(strips));
    run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
      return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys.as<const uint32_t>(), sorted_keys.as<uint32_t>(),
                                               carry.as<const uint64_t>(), sorted_carry.as<uint64_t>(), csr.nnz, 0,
                                               end_bit, context.stream);
    });
    keys = std::move(sorted_keys);
    carry = std::move(sorted_carry);
  }
  DeviceBuffer seg_first = buffer_of<int64_t>(csr.nnz, context);
  tiled.row_segments = select_positions(csr.nnz, SegmentStart{keys.as<const uint32_t>(), carry.as<const uint64_t>()},
                                        seg_first.as<int64_t>(), context);
  tiled.row_ptr = buffer_of<int64_t>(tiled.row_segments + 1, context);
  tiled.row_idx = buffer_of<int32_t>(tiled.row_segments, context);
  for_each_index(tiled.row_segments + 1, context,
                 SegmentFields{seg_first.as<const int64_t>(), tiled.row_segments, csr.nnz, carry.as<const uint64_t>(),
                               tiled.row_ptr.template as<int64_t>(), tiled.row_idx.template as<int32_t>()});
  for_each_index(strips + 1, context,
                 StripPtr{seg_first.as<const int64_t>(), tiled.row_segments, keys.as<const uint32_t>(),
                          tiled.strip_ptr.template as<int64_t>()});
  for_each_index(csr.nnz, context,
                 GatherEntries<V>{carry.as<const uint64_t>(), csr.col_idx, csr.values, tiled.col_idx.template as<int32_t>(),
                                  tiled.values.template as<V>()});
  return tiled;
}

template DeviceTiledDcsr<float> gpu_csr_to_tiled_dcsr<float>(const DeviceCsrView<float>&, int64_t, const GpuContext&);
template DeviceTiledDcsr<double> gpu_csr_to_tiled_dcsr<double>(const DeviceCsrView<double>&, int64_t,
                                                               const GpuContext&);

}  // namespace sparsetc::detail
