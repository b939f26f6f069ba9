// The operands of the binned SpGEMM: any device matrix to the canonical device CSR of op(M), with
// every row sorted. gpu_normalize sorts COO and transposes CSC; CSR is taken as it is (read in
// place when already in the canonical index form and value type), so under a
// relaxed validation level its rows may be unsorted: one pass checks, and only then a stable
// segmented sort fixes them (repeats stay, each one more product).
#include <algorithm>
#include <optional>
#include <type_traits>

#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/binned/device_common.cuh"

namespace sparsetc::detail::binned {
namespace {

// One pass over the entries and the rows: the pairs of neighbouring entries whose column falls
// (descents) or repeats, counted over all entries and over the pairs that straddle two rows (at the
// first entry of every non-empty row). The rows are sorted when the two descent counts agree, and
// free of repeats when the two repeat counts do: no row of any entry is needed. With `widened`,
// the int32 offsets are also copied there as int64. counts: descents, repeats, then at row starts.
template <typename Offset>
__global__ void __launch_bounds__(256)
    row_order_kernel(const int32_t* __restrict__ cols, const Offset* __restrict__ row_ptr, int64_t rows, int64_t nnz,
                     int64_t* __restrict__ widened, unsigned long long* __restrict__ counts) {
  unsigned long long down = 0, same = 0, start_down = 0, start_same = 0;
  const int64_t span = nnz > rows + 1 ? nnz : rows + 1;
  for (int64_t t = int64_t(blockIdx.x) * 256 + threadIdx.x; t < span; t += int64_t(gridDim.x) * 256) {
    if (t > 0 && t < nnz) {
      const int32_t c = cols[t], before = cols[t - 1];
      down += c < before;
      same += c == before;
    }
    if (t <= rows) {
      const int64_t s = int64_t(row_ptr[t]);
      if (widened != nullptr) widened[t] = s;
      if (t < rows && s > 0 && s < int64_t(row_ptr[t + 1])) {
        const int32_t c = cols[s], before = cols[s - 1];
        start_down += c < before;
        start_same += c == before;
      }
    }
  }
  // Summed over the block first: an atomic per warp on four addresses cost 65 us on a 1M-row
  // matrix (H200), the pass itself a few.
  __shared__ unsigned long long block_counts[4];
  if (threadIdx.x < 4) block_counts[threadIdx.x] = 0;
  __syncthreads();
  for (int offset = 16; offset > 0; offset >>= 1) {
    down += __shfl_xor_sync(kFullMask, down, offset);
    same += __shfl_xor_sync(kFullMask, same, offset);
    start_down += __shfl_xor_sync(kFullMask, start_down, offset);
    start_same += __shfl_xor_sync(kFullMask, start_same, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(block_counts + 0, down);
    atomicAdd(block_counts + 1, same);
    atomicAdd(block_counts + 2, start_down);
    atomicAdd(block_counts + 3, start_same);
  }
  __syncthreads();
  if (threadIdx.x < 4 && block_counts[threadIdx.x] != 0) atomicAdd(counts + threadIdx.x, block_counts[threadIdx.x]);
}

// Launches the order check of a CSR whose offsets are `row_ptr` (int64, or int32 to be widened
// into `widened`); the four counters land in the returned buffer.
template <typename Offset>
DeviceBuffer launch_row_order(const int32_t* cols, const Offset* row_ptr, int64_t rows, int64_t nnz, int64_t* widened,
                              const GpuContext& context) {
  DeviceBuffer counts = gpuconv::buffer_of<unsigned long long>(kRowOrderCounters, context);
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(counts.data(), 0, counts.size(), context.stream));
  const int64_t span = std::max(nnz, rows + 1);
  const unsigned blocks = unsigned(std::min<int64_t>((span + 1023) / 1024, 2048));
  row_order_kernel<Offset><<<blocks, 256, 0, context.stream>>>(cols, row_ptr, rows, nnz, widened,
                                                               counts.as<unsigned long long>());
  SPARSETC_CUDA_CHECK_LAUNCH();
  return counts;
}

RowOrder read_row_order(const DeviceBuffer& counts, const GpuContext& context) {
  int64_t host[kRowOrderCounters];
  copy_device_to_host(host, counts.data(), sizeof host, context.stream);
  return row_order_of(host);
}

template <typename Offset>
RowOrder row_order(const int32_t* cols, const Offset* row_ptr, int64_t rows, int64_t nnz, int64_t* widened,
                   const GpuContext& context) {
  return read_row_order(launch_row_order(cols, row_ptr, rows, nnz, widened, context), context);
}

template <typename V>
RowOrder row_order(const DeviceCsr<V>& m, const GpuContext& context) {
  return row_order(m.col_idx.template as<const int32_t>(), m.row_ptr.template as<const int64_t>(), m.rows, m.nnz,
                   nullptr, context);
}

template <typename V>
void sort_rows(DeviceCsr<V>& m, const GpuContext& context) {
  DeviceBuffer cols = gpuconv::buffer_of<int32_t>(m.nnz, context), vals = gpuconv::buffer_of<V>(m.nnz, context);
  const int64_t* ptr = m.row_ptr.template as<const int64_t>();
  gpuconv::run_cub("cub::DeviceSegmentedSort::StableSortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceSegmentedSort::StableSortPairs(temp, bytes, m.col_idx.template as<const int32_t>(), cols.as<int32_t>(),
                                                       m.values.template as<const V>(), vals.as<V>(), m.nnz, m.rows, ptr,
                                                       ptr + 1, context.stream);
  });
  m.col_idx = std::move(cols);
  m.values = std::move(vals);
}

// A zero-based CSR with int32 column indices and values of type V is read in place (its column
// indices and values borrowed, its offsets borrowed when int64, else widened by the order check):
// no copy of the entries. Returns the order check's counters (not read yet); nullopt when the
// matrix is not in that form.
template <typename V>
std::optional<DeviceBuffer> read_in_place(const RawSparse& raw, DeviceCsr<V>& csr, const GpuContext& context) {
  constexpr sparsetc_value_type_t kType = std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  if (raw.format != SPARSETC_FORMAT_CSR || raw.index_type != SPARSETC_INDEX_32 || raw.base != SPARSETC_BASE_ZERO ||
      raw.value_type != kType || (raw.offset_type != SPARSETC_INDEX_32 && raw.offset_type != SPARSETC_INDEX_64) ||
      raw.rows < 0 || raw.nnz < 0 || raw.cols < 0 || raw.cols > 2147483647)
    return std::nullopt;
  csr.rows = raw.rows;
  csr.cols = raw.cols;
  csr.nnz = raw.nnz;
  csr.col_idx = DeviceBuffer::borrow(raw.indices, size_t(raw.nnz) * sizeof(int32_t));
  csr.values = DeviceBuffer::borrow(raw.values, size_t(raw.nnz) * sizeof(V));
  const auto* cols = static_cast<const int32_t*>(raw.indices);
  if (raw.offset_type == SPARSETC_INDEX_64) {
    csr.row_ptr = DeviceBuffer::borrow(raw.offsets, size_t(raw.rows + 1) * sizeof(int64_t));
    return launch_row_order(cols, static_cast<const int64_t*>(raw.offsets), raw.rows, raw.nnz, nullptr, context);
  }
  csr.row_ptr = gpuconv::buffer_of<int64_t>(raw.rows + 1, context);
  return launch_row_order(cols, static_cast<const int32_t*>(raw.offsets), raw.rows, raw.nnz,
                          csr.row_ptr.template as<int64_t>(), context);
}

}  // namespace

RowOrder row_order_of(const int64_t (&counters)[kRowOrderCounters]) {
  return {counters[0] == counters[2], counters[1] == counters[3]};
}

template <typename V>
bool settle_row_order(DeviceCsr<V>& csr, RowOrder order, const GpuContext& context) {
  if (order.sorted) return order.unique;
  sort_rows(csr, context);
  return row_order(csr, context).unique;  // a repeat may have been out of place
}

template <typename V>
DeviceCsr<V> prepare_operand(const RawSparse& raw, sparsetc_duplicates_t duplicates, bool transpose,
                             const GpuContext& context, bool* rows_unique, PendingRowOrder* pending) {
  DeviceCsr<V> csr;
  std::optional<DeviceBuffer> in_place = read_in_place(raw, csr, context);
  if (in_place && pending != nullptr && !transpose) {  // the caller reads the order with stage 2
    pending->counters = std::move(*in_place);
    return csr;
  }
  if (!in_place) csr = gpu_normalize<V>(raw, duplicates, context);
  bool unique = true;
  if (raw.format == SPARSETC_FORMAT_CSR)  // COO and CSC come out sorted and unique
    unique = settle_row_order(csr, in_place ? read_row_order(*in_place, context) : row_order(csr, context), context);
  if (rows_unique) *rows_unique = unique;  // a repeated entry of M is one of M^T too
  if (!transpose) return csr;
  DeviceCsc<V> csc = gpu_csr_to_csc<V>(csr.view(), context);  // the CSC of M is the CSR of M^T
  DeviceCsr<V> t;
  t.rows = csc.cols;
  t.cols = csc.rows;
  t.nnz = csc.nnz;
  t.row_ptr = std::move(csc.col_ptr);
  t.col_idx = std::move(csc.row_idx);
  t.values = std::move(csc.values);
  return t;
}

template DeviceCsr<float> prepare_operand<float>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&,
                                                 bool*, PendingRowOrder*);
template DeviceCsr<double> prepare_operand<double>(const RawSparse&, sparsetc_duplicates_t, bool, const GpuContext&,
                                                   bool*, PendingRowOrder*);
template bool settle_row_order<float>(DeviceCsr<float>&, RowOrder, const GpuContext&);
template bool settle_row_order<double>(DeviceCsr<double>&, RowOrder, const GpuContext&);

}  // namespace sparsetc::detail::binned
