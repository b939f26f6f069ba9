// import_csr: raw arrays of any format, index width, base and value type -> canonical CSR.
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "formats/convert.hpp"
#include "formats/raw.hpp"
#include "formats/values.hpp"

namespace sparsetc::detail {
namespace {


// dst[i] = src[i] - base, widened to int64.
template <typename T>
std::vector<int64_t> zero_based(const void* src, int64_t n, int64_t base) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  const T* s = static_cast<const T*>(src);
  parallel_chunks(n, 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[size_t(i)] = int64_t(s[i]) - base;
  });
  return out;
}

template <typename V, typename O, typename I>
CsrMatrix<V> import_typed(const RawSparse& raw, sparsetc_duplicates_t duplicates) {
  const int64_t base = raw.base, nnz = raw.nnz;
  std::vector<V> values(static_cast<size_t>(nnz));
  load_values(raw.values, raw.value_type, nnz, values.data());
  std::vector<int64_t> indices = zero_based<I>(raw.indices, nnz, base);
  switch (raw.format) {
    case SPARSETC_FORMAT_CSR: {
      CsrMatrix<V> csr;
      csr.rows = raw.rows;
      csr.cols = raw.cols;
      csr.row_ptr = zero_based<O>(raw.offsets, raw.rows + 1, base);
      csr.col_idx = std::move(indices);
      csr.values = std::move(values);
      return csr;
    }
    case SPARSETC_FORMAT_CSC: {
      CscMatrix<V> csc;
      csc.rows = raw.rows;
      csc.cols = raw.cols;
      csc.col_ptr = zero_based<O>(raw.offsets, raw.cols + 1, base);
      csc.row_idx = std::move(indices);
      csc.values = std::move(values);
      return csc_to_csr(csc);
    }
    default: {
      CooMatrix<V> coo;
      coo.rows = raw.rows;
      coo.cols = raw.cols;
      coo.row_idx = zero_based<O>(raw.offsets, nnz, base);
      coo.col_idx = std::move(indices);
      coo.values = std::move(values);
      try {
        return coo_to_csr(coo, duplicates);
      } catch (const Error& e) {
        // coo_to_csr speaks zero-based; on this error path let validate_raw name the same
        // offender in the caller's numbering.
        if (e.status() == SPARSETC_STATUS_INVALID_INDEX || e.status() == SPARSETC_STATUS_DUPLICATE_ENTRY)
          validate_raw(raw, SPARSETC_VALIDATE_STRUCTURE, duplicates);
        throw;
      }
    }
  }
}

}  // namespace

template <typename V>
CsrMatrix<V> import_csr(const RawSparse& raw, sparsetc_duplicates_t duplicates) {
  require(raw.format == SPARSETC_FORMAT_CSR || raw.format == SPARSETC_FORMAT_CSC || raw.format == SPARSETC_FORMAT_COO,
          SPARSETC_STATUS_INVALID_VALUE, "unknown format ", raw.format);
  require(is_valid_index_type(raw.offset_type) && is_valid_index_type(raw.index_type), SPARSETC_STATUS_INVALID_VALUE,
          "unknown index type ", raw.offset_type, " or ", raw.index_type);
  require(is_valid_base(raw.base), SPARSETC_STATUS_INVALID_VALUE, "unknown index base ", raw.base);
  require(raw.rows >= 0 && raw.cols >= 0 && raw.nnz >= 0, SPARSETC_STATUS_INVALID_VALUE, "negative size ", raw.rows,
          "x", raw.cols, ", nnz = ", raw.nnz);
  const bool o32 = raw.offset_type == SPARSETC_INDEX_32, i32 = raw.index_type == SPARSETC_INDEX_32;
  if (o32 && i32) return import_typed<V, int32_t, int32_t>(raw, duplicates);
  if (o32) return import_typed<V, int32_t, int64_t>(raw, duplicates);
  if (i32) return import_typed<V, int64_t, int32_t>(raw, duplicates);
  return import_typed<V, int64_t, int64_t>(raw, duplicates);
}

template CsrMatrix<float> import_csr<float>(const RawSparse&, sparsetc_duplicates_t);
template CsrMatrix<double> import_csr<double>(const RawSparse&, sparsetc_duplicates_t);

}  // namespace sparsetc::detail
