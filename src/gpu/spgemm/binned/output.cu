// The product in the caller's form: offsets in the chosen width and base, column indices in the
// base; and the drop tolerance (entries with |c| <= tol removed, NaN kept, as the host engine does)
// as a compaction: a scan of keep flags gives every kept entry its place and every row its start.
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

template <typename O>
struct ExportOffsets {
  const int64_t* from;
  O* to;
  int64_t base;
  __device__ void operator()(int64_t i) const { to[i] = O(from[i] + base); }
};

struct ExportIndices {
  const int32_t* from;
  int32_t* to;
  int32_t base;
  __device__ void operator()(int64_t i) const { to[i] = from[i] + base; }
};

template <typename V>
struct KeepFlag {
  const V* vals;
  double tolerance;
  int32_t* keep;
  __device__ void operator()(int64_t j) const { keep[j] = fabs(double(vals[j])) <= tolerance ? 0 : 1; }
};

struct RowStarts {
  const int64_t* row_ptr;
  const int64_t* position;  // of every entry, nnz + 1
  int64_t* out;
  __device__ void operator()(int64_t i) const { out[i] = position[row_ptr[i]]; }
};

template <typename V>
struct Compact {
  const int32_t* keep;
  const int64_t* position;
  const int32_t* cols;
  const V* vals;
  int32_t* out_cols;
  V* out_vals;
  __device__ void operator()(int64_t j) const {
    if (!keep[j]) return;
    out_cols[position[j]] = cols[j];
    out_vals[position[j]] = vals[j];
  }
};

}  // namespace

DeviceBuffer export_offsets(const int64_t* row_ptr, int64_t rows, sparsetc_index_type_t type, int base,
                            const GpuContext& context) {
  if (type == SPARSETC_INDEX_64) {
    DeviceBuffer out = gpuconv::buffer_of<int64_t>(rows + 1, context);
    gpuconv::for_each_index(rows + 1, context, ExportOffsets<int64_t>{row_ptr, out.as<int64_t>(), base});
    return out;
  }
  DeviceBuffer out = gpuconv::buffer_of<int32_t>(rows + 1, context);
  gpuconv::for_each_index(rows + 1, context, ExportOffsets<int32_t>{row_ptr, out.as<int32_t>(), base});
  return out;
}

DeviceBuffer export_indices(const int32_t* cols, int64_t nnz, int base, const GpuContext& context) {
  DeviceBuffer out = gpuconv::buffer_of<int32_t>(nnz, context);
  if (nnz == 0) return out;
  if (base == 0) copy_device_to_device(out.data(), cols, size_t(nnz) * sizeof(int32_t), context.stream);
  else gpuconv::for_each_index(nnz, context, ExportIndices{cols, out.as<int32_t>(), int32_t(base)});
  return out;
}

template <typename V>
DeviceCsr<V> drop_small(const DeviceCsrView<V>& c, double tolerance, const GpuContext& context) {
  DeviceCsr<V> out;
  out.rows = c.rows;
  out.cols = c.cols;
  DeviceBuffer keep = gpuconv::buffer_of<int32_t>(c.nnz, context);
  DeviceBuffer position = gpuconv::buffer_of<int64_t>(c.nnz + 1, context);
  gpuconv::for_each_index(c.nnz, context, KeepFlag<V>{c.values, tolerance, keep.as<int32_t>()});
  gpuconv::exclusive_scan_total(keep.as<const int32_t>(), position.as<int64_t>(), c.nnz, context);
  out.row_ptr = gpuconv::buffer_of<int64_t>(c.rows + 1, context);
  gpuconv::for_each_index(c.rows + 1, context,
                          RowStarts{c.row_ptr, position.as<const int64_t>(), out.row_ptr.template as<int64_t>()});
  out.nnz = gpuconv::read_back(position.as<const int64_t>() + c.nnz, context.stream);
  out.col_idx = gpuconv::buffer_of<int32_t>(out.nnz, context);
  out.values = gpuconv::buffer_of<V>(out.nnz, context);
  gpuconv::for_each_index(c.nnz, context,
                          Compact<V>{keep.as<const int32_t>(), position.as<const int64_t>(), c.col_idx, c.values,
                                     out.col_idx.template as<int32_t>(), out.values.template as<V>()});
  return out;
}

template DeviceCsr<float> drop_small<float>(const DeviceCsrView<float>&, double, const GpuContext&);
template DeviceCsr<double> drop_small<double>(const DeviceCsrView<double>&, double, const GpuContext&);

}  // namespace sparsetc::detail::binned
