// gpu_normalize: a user's device CSR/CSC/COO arrays (any index widths, base 0/1, any value type)
// -> canonical device CSR (zero-based, int64 row_ptr, int32 col_idx, values V), the device twin of
// import_csr.
//
// CSR: elementwise widening/narrowing kernels (one pass over each array). CSC: the same into a
// canonical CSC, then transpose_compressed. COO: the counting sort into row buckets
// (coo_row_buckets.cuh) where the buckets fit; otherwise 64-bit keys row * cols + col (two stable
// radix passes, column then row, when that product overflows) sorted with the entry numbers by
// cub::DeviceRadixSort (stable, only the key bits in use), runs of equal (row, col) found with
// cub::DeviceSelect::If (one read back: the unique count), summed in input order by one thread per
// run (the host's order, so the sums are bit-identical), and row_ptr one lower_bound per row.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/types.hpp"
#include "gpu/convert/convert_common.cuh"
#include "gpu/convert/convert_internal.hpp"
#include "gpu/convert/coo_row_buckets.cuh"
#include "gpu/convert/device_rounding.cuh"
#include "gpu/convert/gpu_convert.hpp"

namespace sparsetc::detail {
namespace gpuconv {
namespace {

using ull = unsigned long long;

// ---- values

template <typename V>
struct LoadF32 {
  const float* src;
  V* dst;
  __device__ void operator()(int64_t i) const { dst[i] = d_from_float<V>(src[i]); }
};
template <typename V>
struct LoadF64 {  // V = double only (float goes through gpu_convert_values)
  const double* src;
  V* dst;
  __device__ void operator()(int64_t i) const { dst[i] = d_from_double<V>(src[i]); }
};
template <typename V>
struct LoadF16 {
  const uint16_t* src;
  V* dst;
  __device__ void operator()(int64_t i) const { dst[i] = d_from_float<V>(d_half_to_float(src[i])); }
};
template <typename V>
struct LoadBF16 {
  const uint16_t* src;
  V* dst;
  __device__ void operator()(int64_t i) const { dst[i] = d_from_float<V>(d_bfloat16_to_float(src[i])); }
};

// dst[i] = src[i] as V, as load_values does (f64 -> float checks the range like the host).
template <typename V>
void load_values_device(const void* src, sparsetc_value_type_t type, int64_t n, V* dst, const GpuContext& context) {
  if (n == 0) return;
  switch (type) {
    case SPARSETC_VALUE_F32: for_each_index(n, context, LoadF32<V>{static_cast<const float*>(src), dst}); break;
    case SPARSETC_VALUE_F64:
      if constexpr (std::is_same_v<V, float>) {
        const double* s = static_cast<const double*>(src);
        const ValueConversion c = gpu_convert_values(s, n, SPARSETC_VALUE_F32, dst, context);
        if (c.out_of_range > 0) value_out_of_range_error(s, c.first_out_of_range, SPARSETC_VALUE_F32, context.stream);
      } else {
        for_each_index(n, context, LoadF64<V>{static_cast<const double*>(src), dst});
      }
      break;
    case SPARSETC_VALUE_F16: for_each_index(n, context, LoadF16<V>{static_cast<const uint16_t*>(src), dst}); break;
    default: for_each_index(n, context, LoadBF16<V>{static_cast<const uint16_t*>(src), dst}); break;
  }
}

// ---- indices

template <typename T>
struct ToOffsets {  // int64, zero-based
  const T* src;
  int64_t base;
  int64_t* dst;
  __device__ void operator()(int64_t i) const { dst[i] = int64_t(src[i]) - base; }
};

template <typename T>
struct ToIndices {  // int32, zero-based
  const T* src;
  int64_t base;
  int32_t* dst;
  __device__ void operator()(int64_t i) const { dst[i] = int32_t(int64_t(src[i]) - base); }
};

// ---- COO

template <typename O, typename I>
struct CooKeys {
  const O* rows;
  const I* cols;
  int64_t base;
  uint64_t ncols;
  uint64_t* keys;
  uint32_t* order;
  __device__ void operator()(int64_t j) const {
    keys[j] = uint64_t(int64_t(rows[j]) - base) * ncols + uint64_t(int64_t(cols[j]) - base);
    order[j] = uint32_t(j);
  }
};

struct DecodeKeys {
  const uint64_t* keys;
  uint64_t ncols;
  int64_t* srow;
  int32_t* scol;
  __device__ void operator()(int64_t p) const {
    const uint64_t key = keys[p], row = key / ncols;
    srow[p] = int64_t(row);
    scol[p] = int32_t(key - row * ncols);
  }
};

template <typename T>
struct ColumnKeys {  // first of the two passes
  const T* cols;
  int64_t base;
  uint32_t* keys;
  uint32_t* order;
  __device__ void operator()(int64_t j) const {
    keys[j] = uint32_t(int64_t(cols[j]) - base);
    order[j] = uint32_t(j);
  }
};

template <typename T>
struct RowKeysOf {  // second pass: the rows of the column-sorted entries
  const T* rows;
  int64_t base;
  const uint32_t* order;
  uint64_t* keys;
  __device__ void operator()(int64_t p) const { keys[p] = uint64_t(int64_t(rows[order[p]]) - base); }
};

template <typename T>
struct ColumnsOf {
  const T* cols;
  int64_t base;
  const uint32_t* order;
  int32_t* scol;
  __device__ void operator()(int64_t p) const { scol[p] = int32_t(int64_t(cols[order[p]]) - base); }
};

struct RunStart {
  const int64_t* srow;
  const int32_t* scol;
  __device__ bool operator()(int64_t p) const {
    return p == 0 || srow[p] != srow[p - 1] || scol[p] != scol[p - 1];
  }
};

struct FirstRepeat {  // error path: the smallest entry number that repeats an earlier entry
  RunStart start;
  const uint32_t* order;
  ull* result;
  __device__ void operator()(int64_t p) const {
    if (!start(p)) atomicMin(result, ull(order[p]));
  }
};

template <typename T>
struct RowDescent {  // entry p + 1's row is below entry p's
  const T* rows;
  ull* result;
  __device__ void operator()(int64_t p) const {
    if (rows[p + 1] < rows[p]) atomicMin(result, ull(p + 1));
  }
};

struct FirstOccurrence {  // error path: the smallest entry number at (row, col)
  const int64_t* srow;
  const int32_t* scol;
  const uint32_t* order;
  int64_t row;
  int32_t col;
  ull* result;
  __device__ void operator()(int64_t p) const {
    if (srow[p] == row && scol[p] == col) atomicMin(result, ull(order[p]));
  }
};

template <typename V>
struct SumRuns {
  const int64_t* starts;
  int64_t runs, nnz;
  const uint32_t* order;
  const V* values;
  const int64_t* srow;
  const int32_t* scol;
  V* out_val;
  int32_t* out_col;
  int64_t* run_row;
  __device__ void operator()(int64_t u) const {
    const int64_t s = starts[u], e = u + 1 < runs ? starts[u + 1] : nnz;
    V v = values[order[s]];
    for (int64_t p = s + 1; p < e; ++p) v += values[order[p]];  // input order, as the host
    out_val[u] = v;
    out_col[u] = scol[s];
    run_row[u] = srow[s];
  }
};

struct RowPtrFromRows {  // row_ptr[r] = number of runs in rows below r
  const int64_t* run_row;
  int64_t runs;
  int64_t* row_ptr;
  __device__ void operator()(int64_t r) const {
    int64_t lo = 0, hi = runs;
    while (lo < hi) {
      const int64_t mid = (lo + hi) >> 1;
      if (run_row[mid] < r) lo = mid + 1;
      else hi = mid;
    }
    row_ptr[r] = lo;
  }
};

template <typename K, typename Val>
void radix_sort_pairs(const K* keys_in, K* keys_out, const Val* vals_in, Val* vals_out, int64_t n, int end_bit,
                      const GpuContext& context) {
  if (end_bit == 0) {  // one key value: already sorted
    copy_device_to_device(keys_out, keys_in, size_t(n) * sizeof(K), context.stream);
    copy_device_to_device(vals_out, vals_in, size_t(n) * sizeof(Val), context.stream);
    return;
  }
  run_cub("cub::DeviceRadixSort::SortPairs", context, [&](void* temp, size_t& bytes) {
    return cubns::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit,
                                             context.stream);
  });
}

// The error of SPARSETC_DUPLICATES_ERROR, as the host words it: entry k (zero-based) repeats entry
// twin, at (row, col) in the caller's numbering.
[[noreturn]] void fail_duplicate(const RawSparse& raw, int64_t k, int64_t twin, int64_t row, int64_t col) {
  fail(SPARSETC_STATUS_DUPLICATE_ENTRY, "duplicate entry (row ", row, ", column ", col, ") at entries ",
       twin + raw.base, " and ", k + raw.base, raw.base == SPARSETC_BASE_ONE ? " (1-based)" : "");
}

// The row buckets for rows x cols with nnz entries, or false where they do not fit (too many rows
// for the buckets, or for the bits the columns leave).
struct RowBucketPlan {
  int64_t rows_per_bucket = 0, buckets = 0, ctas = 0;  // ctas: of the count and the scatter
  int col_bits = 0;                                    // of the record's 32 bits of row and column
};
bool plan_row_buckets(int64_t rows, int64_t cols, int64_t nnz, RowBucketPlan& plan) {
  if (rows <= 0 || rows > kMaxInt32 || cols <= 0 || nnz <= 0 || nnz >= (int64_t(1) << 32)) return false;
  const int col_bits = std::max(1, bits_for(uint64_t(cols)));
  const int64_t most_rows = std::min<int64_t>(kBucketCap, int64_t(1) << (32 - col_bits));
  int64_t per = std::clamp<int64_t>((kBucketTarget * rows + nnz - 1) / nnz, 1, most_rows);
  if ((rows + per - 1) / per > kMaxBuckets) per = (rows + kMaxBuckets - 1) / kMaxBuckets;
  if (per > most_rows) return false;
  plan.rows_per_bucket = per;
  plan.buckets = (rows + per - 1) / per;
  plan.col_bits = col_bits;
  // CTAs of the count and the scatter: each CTA ends the count with one global add per bucket, so
  // at most nnz / (4 * buckets) CTAs (a quarter of an add an entry), but never fewer than
  // kMinChunks (the machine busy) nor more than the runs of entries to walk.
  const int64_t runs = (nnz + kChunkThreads * kChunkLoads - 1) / (kChunkThreads * kChunkLoads);
  plan.ctas = std::min(runs, std::max<int64_t>({int64_t(1), nnz / (4 * plan.buckets), kMinChunks}));
  return true;
}

// COO -> CSR by row buckets (coo_row_buckets.cuh) into result; false, with result untouched, where
// a bucket does not fit. Two read-backs: the largest bucket, and the entries kept.
template <typename V, typename O, typename I>
bool coo_by_row_buckets(const RawSparse& raw, sparsetc_duplicates_t duplicates, const V* values,
                        const GpuContext& context, DeviceCsr<V>& result) {
  RowBucketPlan plan;
  if (!plan_row_buckets(raw.rows, raw.cols, raw.nnz, plan)) return false;
  const int64_t rows = raw.rows, nnz = raw.nnz, base = raw.base;
  const O* ri = static_cast<const O*>(raw.offsets);
  const I* ci = static_cast<const I*>(raw.indices);
  const cudaStream_t stream = context.stream;
  const FastDivider bucket_rows(uint32_t(plan.rows_per_bucket));
  const int buckets = int(plan.buckets);
  const size_t counters = size_t(buckets) * sizeof(uint32_t);

  DeviceBuffer bucket_start = buffer_of<int64_t>(buckets + 1, context);
  DeviceBuffer records;  // 16 bytes an entry: taken only once the buckets are known to fit
  {
    const unsigned ctas = unsigned(plan.ctas);
    DeviceBuffer size = buffer_of<unsigned>(buckets, context);
    zero(size.as<unsigned>(), buckets, stream);
    allow_dynamic_shared(count_row_buckets_kernel<O>, counters);
    count_row_buckets_kernel<O>
        <<<ctas, kChunkThreads, counters, stream>>>(ri, base, nnz, bucket_rows, buckets, size.as<unsigned>());
    SPARSETC_CUDA_CHECK_LAUNCH();
    exclusive_scan_total(size.as<const unsigned>(), bucket_start.as<int64_t>(), buckets, context);
    DeviceBuffer cursor = buffer_of<uint32_t>(buckets, context);
    DeviceBuffer largest = buffer_of<unsigned>(1, context);
    zero(largest.as<unsigned>(), 1, stream);
    for_each_index(buckets, context,
                   BucketCursors{bucket_start.as<const int64_t>(), cursor.as<uint32_t>(), largest.as<unsigned>()});
    if (read_back(largest.as<const unsigned>(), stream) > unsigned(kBucketCap)) return false;
    records = buffer_of<BucketRecord<V>>(nnz, context);
    scatter_row_buckets_kernel<O, I, V><<<ctas, kChunkThreads, 0, stream>>>(
        ri, ci, values, base, nnz, bucket_rows, plan.col_bits, cursor.as<uint32_t>(), records.as<BucketRecord<V>>());
    SPARSETC_CUDA_CHECK_LAUNCH();
  }

  DeviceCsr<V> csr;
  csr.rows = rows;
  csr.cols = raw.cols;
  csr.row_ptr = buffer_of<int64_t>(rows + 1, context);
  csr.col_idx = buffer_of<int32_t>(nnz, context);
  csr.values = buffer_of<V>(nnz, context);
  DeviceBuffer words = buffer_of<ull>(buckets, context);
  zero(words.as<ull>(), buckets, stream);
  DeviceBuffer repeat = buffer_of<ull>(1, context);
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(repeat.data(), 0xff, sizeof(ull), stream));
  const BucketOutput<V> out{csr.row_ptr.template as<int64_t>(), csr.col_idx.template as<int32_t>(),
                            csr.values.template as<V>(), repeat.as<ull>()};
  sort_row_buckets_kernel<V><<<unsigned(buckets), kBucketThreads, 0, stream>>>(
      bucket_start.as<const int64_t>(), records.as<const BucketRecord<V>>(), rows, int(plan.rows_per_bucket),
      plan.col_bits, TilePrefixes{words.as<ull>()}, out);
  SPARSETC_CUDA_CHECK_LAUNCH();

  const int64_t kept = read_back(csr.row_ptr.template as<const int64_t>() + rows, stream);
  if (kept < nnz) {
    if (duplicates == SPARSETC_DUPLICATES_ERROR) {
      const ull packed = read_back(repeat.as<const ull>(), stream);
      const int64_t k = int64_t(packed >> 32);
      fail_duplicate(raw, k, int64_t(packed & 0xFFFFFFFFu), int64_t(read_back(ri + k, stream)),
                     int64_t(read_back(ci + k, stream)));
    }
    DeviceBuffer col_idx = buffer_of<int32_t>(kept, context), kept_values = buffer_of<V>(kept, context);
    copy_device_to_device(col_idx.data(), csr.col_idx.data(), size_t(kept) * sizeof(int32_t), stream);
    copy_device_to_device(kept_values.data(), csr.values.data(), size_t(kept) * sizeof(V), stream);
    csr.col_idx = std::move(col_idx);
    csr.values = std::move(kept_values);
  }
  csr.nnz = kept;
  result = std::move(csr);
  return true;
}

template <typename V, typename O, typename I>
DeviceCsr<V> coo_to_device_csr(const RawSparse& raw, sparsetc_duplicates_t duplicates, const V* values,
                               const GpuContext& context, const NormalizeOptions& options) {
  const int64_t rows = raw.rows, cols = raw.cols, nnz = raw.nnz, base = raw.base;
  const O* ri = static_cast<const O*>(raw.offsets);
  const I* ci = static_cast<const I*>(raw.indices);
  DeviceCsr<V> csr;
  csr.rows = rows;
  csr.cols = cols;
  if (nnz == 0) {
    csr.row_ptr = buffer_of<int64_t>(rows + 1, context);
    zero(csr.row_ptr.template as<int64_t>(), rows + 1, context.stream);
    return csr;
  }
  require(nnz < (int64_t(1) << 32), SPARSETC_STATUS_SIZE_OVERFLOW, "GPU COO import takes fewer than 2^32 entries, not ",
          nnz);
  if (options.row_buckets && coo_by_row_buckets<V, O, I>(raw, duplicates, values, context, csr)) {
    if (options.way) *options.way = CooWay::kRowBuckets;
    return csr;
  }
  if (options.way) *options.way = CooWay::kRadixSort;
  csr.row_ptr = buffer_of<int64_t>(rows + 1, context);
  DeviceBuffer order = buffer_of<uint32_t>(nnz, context);
  DeviceBuffer srow = buffer_of<int64_t>(nnz, context);
  DeviceBuffer scol = buffer_of<int32_t>(nnz, context);
  {
    DeviceBuffer order_in = buffer_of<uint32_t>(nnz, context);
    const uint64_t ncols = uint64_t(cols);
    if (ncols == 0 || uint64_t(rows) <= std::numeric_limits<uint64_t>::max() / ncols) {  // one key: row * cols + col
      DeviceBuffer keys_in = buffer_of<uint64_t>(nnz, context);
      DeviceBuffer keys = buffer_of<uint64_t>(nnz, context);
      for_each_index(nnz, context, CooKeys<O, I>{ri, ci, base, ncols, keys_in.as<uint64_t>(), order_in.as<uint32_t>()});
      radix_sort_pairs(keys_in.as<const uint64_t>(), keys.as<uint64_t>(), order_in.as<const uint32_t>(),
                       order.as<uint32_t>(), nnz, bits_for(uint64_t(rows) * ncols), context);
      for_each_index(nnz, context, DecodeKeys{keys.as<const uint64_t>(), ncols, srow.as<int64_t>(), scol.as<int32_t>()});
    } else {  // two stable passes: by column, then by row
      DeviceBuffer col_keys_in = buffer_of<uint32_t>(nnz, context);
      DeviceBuffer col_keys = buffer_of<uint32_t>(nnz, context);
      DeviceBuffer by_col = buffer_of<uint32_t>(nnz, context);
      for_each_index(nnz, context, ColumnKeys<I>{ci, base, col_keys_in.as<uint32_t>(), order_in.as<uint32_t>()});
      radix_sort_pairs(col_keys_in.as<const uint32_t>(), col_keys.as<uint32_t>(), order_in.as<const uint32_t>(),
                       by_col.as<uint32_t>(), nnz, bits_for(uint64_t(cols)), context);
      DeviceBuffer row_keys_in = buffer_of<uint64_t>(nnz, context);
      for_each_index(nnz, context, RowKeysOf<O>{ri, base, by_col.as<const uint32_t>(), row_keys_in.as<uint64_t>()});
      radix_sort_pairs(row_keys_in.as<const uint64_t>(), srow.as<uint64_t>(), by_col.as<const uint32_t>(),
                       order.as<uint32_t>(), nnz, bits_for(uint64_t(rows)), context);
      for_each_index(nnz, context, ColumnsOf<I>{ci, base, order.as<const uint32_t>(), scol.as<int32_t>()});
    }
  }
  const RunStart is_start{srow.as<const int64_t>(), scol.as<const int32_t>()};
  DeviceBuffer starts = buffer_of<int64_t>(nnz, context);
  const int64_t runs = select_positions(nnz, is_start, starts.as<int64_t>(), context);

  if (runs < nnz && duplicates == SPARSETC_DUPLICATES_ERROR) {
    DeviceBuffer found = buffer_of<ull>(2, context);
    ull* f = found.as<ull>();
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(f, 0xff, 2 * sizeof(ull), context.stream));
    for_each_index(nnz, context, FirstRepeat{is_start, order.as<const uint32_t>(), f});
    const int64_t k = int64_t(read_back(f, context.stream));
    const int64_t row = int64_t(read_back(ri + k, context.stream));  // the caller's numbering
    const int64_t col = int64_t(read_back(ci + k, context.stream));
    for_each_index(nnz, context,
                   FirstOccurrence{srow.as<const int64_t>(), scol.as<const int32_t>(), order.as<const uint32_t>(),
                                   row - base, int32_t(col - base), f + 1});
    fail_duplicate(raw, k, int64_t(read_back(f + 1, context.stream)), row, col);
  }

  csr.nnz = runs;
  csr.col_idx = buffer_of<int32_t>(runs, context);
  csr.values = buffer_of<V>(runs, context);
  DeviceBuffer run_row = buffer_of<int64_t>(runs, context);
  for_each_index(runs, context,
                 SumRuns<V>{starts.as<const int64_t>(), runs, nnz, order.as<const uint32_t>(), values,
                            srow.as<const int64_t>(), scol.as<const int32_t>(), csr.values.template as<V>(),
                            csr.col_idx.template as<int32_t>(), run_row.as<int64_t>()});
  for_each_index(rows + 1, context, RowPtrFromRows{run_row.as<const int64_t>(), runs, csr.row_ptr.template as<int64_t>()});
  return csr;
}

template <typename V, typename O, typename I>
DeviceCsr<V> normalize_typed(const RawSparse& raw, sparsetc_duplicates_t duplicates, const GpuContext& context,
                             const NormalizeOptions& options) {
  const int64_t nnz = raw.nnz, base = raw.base;
  constexpr sparsetc_value_type_t kValueType = std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  if (raw.format == SPARSETC_FORMAT_COO && raw.value_type == kValueType)  // the sort reads them where they are
    return coo_to_device_csr<V, O, I>(raw, duplicates, static_cast<const V*>(raw.values), context, options);
  DeviceBuffer values = buffer_of<V>(nnz, context);
  load_values_device(raw.values, raw.value_type, nnz, values.as<V>(), context);
  const O* offsets = static_cast<const O*>(raw.offsets);
  const I* indices = static_cast<const I*>(raw.indices);
  switch (raw.format) {
    case SPARSETC_FORMAT_CSR: {
      DeviceCsr<V> csr;
      csr.rows = raw.rows;
      csr.cols = raw.cols;
      csr.nnz = nnz;
      csr.row_ptr = buffer_of<int64_t>(raw.rows + 1, context);
      csr.col_idx = buffer_of<int32_t>(nnz, context);
      for_each_index(raw.rows + 1, context, ToOffsets<O>{offsets, base, csr.row_ptr.template as<int64_t>()});
      for_each_index(nnz, context, ToIndices<I>{indices, base, csr.col_idx.template as<int32_t>()});
      csr.values = std::move(values);
      return csr;
    }
    case SPARSETC_FORMAT_CSC: {
      require(raw.rows <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "GPU CSC import: ", raw.rows,
              " rows exceed int32 indices");
      DeviceBuffer col_ptr = buffer_of<int64_t>(raw.cols + 1, context);
      DeviceBuffer row_idx = buffer_of<int32_t>(nnz, context);
      for_each_index(raw.cols + 1, context, ToOffsets<O>{offsets, base, col_ptr.as<int64_t>()});
      for_each_index(nnz, context, ToIndices<I>{indices, base, row_idx.as<int32_t>()});
      DeviceCsr<V> csr;
      csr.rows = raw.rows;
      csr.cols = raw.cols;
      csr.nnz = nnz;
      transpose_compressed(raw.cols, raw.rows, nnz, col_ptr.as<const int64_t>(), row_idx.as<const int32_t>(),
                           values.as<const V>(), csr.row_ptr, csr.col_idx, csr.values, context);
      return csr;
    }
    default: return coo_to_device_csr<V, O, I>(raw, duplicates, values.as<const V>(), context, options);
  }
}

}  // namespace

template <typename V>
DeviceCsr<V> normalize(const RawSparse& raw, sparsetc_duplicates_t duplicates, const GpuContext& context,
                       const NormalizeOptions& options) {
  require(raw.format == SPARSETC_FORMAT_CSR || raw.format == SPARSETC_FORMAT_CSC || raw.format == SPARSETC_FORMAT_COO,
          SPARSETC_STATUS_INVALID_VALUE, "unknown format ", raw.format);
  require(is_valid_index_type(raw.offset_type) && is_valid_index_type(raw.index_type), SPARSETC_STATUS_INVALID_VALUE,
          "unknown index type ", raw.offset_type, " or ", raw.index_type);
  require(is_valid_base(raw.base), SPARSETC_STATUS_INVALID_VALUE, "unknown index base ", raw.base);
  require(is_valid_value_type(raw.value_type), SPARSETC_STATUS_INVALID_VALUE, "unknown value type ", raw.value_type);
  require(duplicates == SPARSETC_DUPLICATES_ERROR || duplicates == SPARSETC_DUPLICATES_SUM,
          SPARSETC_STATUS_INVALID_VALUE, "unknown duplicates policy ", duplicates);
  require(raw.rows >= 0 && raw.cols >= 0 && raw.nnz >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative size ", raw.rows,
          "x", raw.cols, ", nnz = ", raw.nnz);
  require(raw.cols <= kMaxInt32, SPARSETC_STATUS_SIZE_OVERFLOW, "the device CSR takes at most 2^31 - 1 columns, not ",
          raw.cols);
  const bool o32 = raw.offset_type == SPARSETC_INDEX_32, i32 = raw.index_type == SPARSETC_INDEX_32;
  if (o32 && i32) return normalize_typed<V, int32_t, int32_t>(raw, duplicates, context, options);
  if (o32) return normalize_typed<V, int32_t, int64_t>(raw, duplicates, context, options);
  if (i32) return normalize_typed<V, int64_t, int32_t>(raw, duplicates, context, options);
  return normalize_typed<V, int64_t, int64_t>(raw, duplicates, context, options);
}

template DeviceCsr<float> normalize<float>(const RawSparse&, sparsetc_duplicates_t, const GpuContext&,
                                           const NormalizeOptions&);
template DeviceCsr<double> normalize<double>(const RawSparse&, sparsetc_duplicates_t, const GpuContext&,
                                             const NormalizeOptions&);

}  // namespace gpuconv

template <typename V>
DeviceCsr<V> gpu_normalize(const RawSparse& raw, sparsetc_duplicates_t duplicates, const GpuContext& context) {
  return gpuconv::normalize<V>(raw, duplicates, context, {});
}

int64_t gpu_coo_first_unsorted_row(const RawSparse& coo, const GpuContext& context) {
  using namespace gpuconv;
  require(coo.format == SPARSETC_FORMAT_COO, SPARSETC_STATUS_INVALID_VALUE, "a COO matrix's row order: not COO");
  if (coo.nnz < 2) return -1;
  DeviceBuffer first = buffer_of<ull>(1, context);
  SPARSETC_CUDA_CHECK(cudaMemsetAsync(first.data(), 0xFF, sizeof(ull), context.stream));
  ull* result = first.as<ull>();
  if (coo.index_type == SPARSETC_INDEX_32)
    for_each_index(coo.nnz - 1, context, RowDescent<int32_t>{static_cast<const int32_t*>(coo.offsets), result});
  else
    for_each_index(coo.nnz - 1, context, RowDescent<int64_t>{static_cast<const int64_t*>(coo.offsets), result});
  const ull entry = read_back(result, context.stream);
  return entry == ~ull(0) ? -1 : int64_t(entry);
}

template DeviceCsr<float> gpu_normalize<float>(const RawSparse&, sparsetc_duplicates_t, const GpuContext&);
template DeviceCsr<double> gpu_normalize<double>(const RawSparse&, sparsetc_duplicates_t, const GpuContext&);

}  // namespace sparsetc::detail
