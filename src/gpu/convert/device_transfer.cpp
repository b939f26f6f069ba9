// Copies between the device conversion results and the host structs of formats/ (each to_host
// waits for its copies: a synchronisation point).
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/cuda_check.hpp"

namespace sparsetc::detail {
namespace {

template <typename T>
std::vector<T> download(const void* device, int64_t n, cudaStream_t stream) {
  std::vector<T> host(size_t(n > 0 ? n : 0));
  if (n > 0) copy_device_to_host(host.data(), device, size_t(n) * sizeof(T), stream);
  return host;
}

std::vector<int64_t> widen(const std::vector<int32_t>& v) { return std::vector<int64_t>(v.begin(), v.end()); }

}  // namespace

template <typename V>
DeviceCsr<V> csr_to_device(const CsrMatrix<V>& csr, const GpuContext& context) {
  require(csr.cols <= 2147483647, SPARSETC_STATUS_SIZE_OVERFLOW, "the device CSR takes at most 2^31 - 1 columns, not ",
          csr.cols);
  require(int64_t(csr.row_ptr.size()) == csr.rows + 1 && csr.values.size() == csr.col_idx.size(),
          SPARSETC_STATUS_INVALID_VALUE, "malformed CSR");
  DeviceCsr<V> d;
  d.rows = csr.rows;
  d.cols = csr.cols;
  d.nnz = csr.nnz();
  d.row_ptr = DeviceBuffer(size_t(d.rows + 1) * sizeof(int64_t), context);
  d.col_idx = DeviceBuffer(size_t(d.nnz) * sizeof(int32_t), context);
  d.values = DeviceBuffer(size_t(d.nnz) * sizeof(V), context);
  const std::vector<int32_t> cols(csr.col_idx.begin(), csr.col_idx.end());
  copy_host_to_device(d.row_ptr.data(), csr.row_ptr.data(), csr.row_ptr.size() * sizeof(int64_t), context.stream);
  copy_host_to_device(d.col_idx.data(), cols.data(), cols.size() * sizeof(int32_t), context.stream);
  copy_host_to_device(d.values.data(), csr.values.data(), csr.values.size() * sizeof(V), context.stream);
  // Pageable sources: wait so the temporaries may go (and the copies are complete for any stream).
  SPARSETC_CUDA_CHECK(cudaStreamSynchronize(context.stream));
  return d;
}

template <typename V>
CsrMatrix<V> csr_to_host(const DeviceCsrView<V>& d, cudaStream_t stream) {
  CsrMatrix<V> csr;
  csr.rows = d.rows;
  csr.cols = d.cols;
  csr.row_ptr = download<int64_t>(d.row_ptr, d.rows + 1, stream);
  csr.col_idx = widen(download<int32_t>(d.col_idx, d.nnz, stream));
  csr.values = download<V>(d.values, d.nnz, stream);
  return csr;
}

template <typename V>
HostCsrPattern csr_pattern_to_host(const DeviceCsrView<V>& d, cudaStream_t stream) {
  HostCsrPattern pattern;
  pattern.rows = d.rows;
  pattern.cols = d.cols;
  pattern.row_ptr = download<int64_t>(d.row_ptr, d.rows + 1, stream);
  pattern.col_idx = widen(download<int32_t>(d.col_idx, d.nnz, stream));
  return pattern;
}

template <typename V>
CscMatrix<V> csc_to_host(const DeviceCscView<V>& d, cudaStream_t stream) {
  CscMatrix<V> csc;
  csc.rows = d.rows;
  csc.cols = d.cols;
  csc.col_ptr = download<int64_t>(d.col_ptr, d.cols + 1, stream);
  csc.row_idx = widen(download<int32_t>(d.row_idx, d.nnz, stream));
  csc.values = download<V>(d.values, d.nnz, stream);
  return csc;
}

template <typename V>
CscMatrix<V> DeviceCsc<V>::to_host(cudaStream_t stream) const {
  return csc_to_host(view(), stream);
}

template <typename V>
BcsrMatrix<V> DeviceBcsr<V>::to_host(cudaStream_t stream) const {
  BcsrMatrix<V> b;
  b.rows = rows;
  b.cols = cols;
  b.block_height = block_height;
  b.block_width = block_width;
  b.block_row_ptr = download<int64_t>(block_row_ptr.data(), block_rows() + 1, stream);
  b.block_col = download<int32_t>(block_col.data(), blocks, stream);
  b.values = download<V>(values.data(), blocks * block_height * block_width, stream);
  return b;
}

template <typename V>
BitmapTiles<V> DeviceBitmapTiles<V>::to_host(cudaStream_t stream) const {
  BitmapTiles<V> t;
  t.rows = rows;
  t.cols = cols;
  t.tile_row_ptr = download<int64_t>(tile_row_ptr.data(), tile_rows() + 1, stream);
  t.tile_row = download<int32_t>(tile_row.data(), tiles, stream);
  t.tile_col = download<int32_t>(tile_col.data(), tiles, stream);
  t.bitmap = download<uint64_t>(bitmap.data(), tiles, stream);
  t.element_offset = download<int64_t>(element_offset.data(), tiles + 1, stream);
  t.values = download<V>(values.data(), nnz, stream);
  return t;
}

template <typename V>
DcsrMatrix<V> DeviceDcsr<V>::to_host(cudaStream_t stream) const {
  DcsrMatrix<V> d;
  d.rows = rows;
  d.cols = cols;
  d.row_idx = download<int64_t>(row_idx.data(), nonempty_rows, stream);
  d.row_ptr = download<int64_t>(row_ptr.data(), nonempty_rows + 1, stream);
  d.col_idx = download<int32_t>(col_idx.data(), nnz, stream);
  d.values = download<V>(values.data(), nnz, stream);
  return d;
}

template <typename V>
TiledDcsr<V> DeviceTiledDcsr<V>::to_host(cudaStream_t stream) const {
  TiledDcsr<V> t;
  t.rows = rows;
  t.cols = cols;
  t.strip_width = strip_width;
  t.strip_ptr = download<int64_t>(strip_ptr.data(), strips() + 1, stream);
  t.row_idx = download<int32_t>(row_idx.data(), row_segments, stream);
  t.row_ptr = download<int64_t>(row_ptr.data(), row_segments + 1, stream);
  t.col_idx = download<int32_t>(col_idx.data(), nnz, stream);
  t.values = download<V>(values.data(), nnz, stream);
  return t;
}

template <typename V>
VbrMatrix<V> DeviceVbr<V>::to_host(cudaStream_t stream) const {
  VbrMatrix<V> v;
  v.rows = rows;
  v.cols = cols;
  v.block_width = block_width;
  v.group_ptr = download<int64_t>(group_ptr.data(), groups + 1, stream);
  v.block_ptr = download<int64_t>(block_ptr.data(), groups + 1, stream);
  v.block_col = download<int32_t>(block_col.data(), blocks, stream);
  v.value_offset = download<int64_t>(value_offset.data(), blocks + 1, stream);
  v.values = download<V>(values.data(), value_count, stream);
  return v;
}

#define SPARSETC_DEVICE_TRANSFER(V)                                                        \
  template DeviceCsr<V> csr_to_device<V>(const CsrMatrix<V>&, const GpuContext&);          \
  template CsrMatrix<V> csr_to_host<V>(const DeviceCsrView<V>&, cudaStream_t);             \
  template CscMatrix<V> csc_to_host<V>(const DeviceCscView<V>&, cudaStream_t);             \
  template HostCsrPattern csr_pattern_to_host<V>(const DeviceCsrView<V>&, cudaStream_t);   \
  template struct DeviceCsc<V>;                                                            \
  template struct DeviceBcsr<V>;                                                           \
  template struct DeviceBitmapTiles<V>;                                                    \
  template struct DeviceDcsr<V>;                                                           \
  template struct DeviceTiledDcsr<V>;                                                      \
  template struct DeviceVbr<V>;
SPARSETC_DEVICE_TRANSFER(float)
SPARSETC_DEVICE_TRANSFER(double)
#undef SPARSETC_DEVICE_TRANSFER

}  // namespace sparsetc::detail
