// export_csr: canonical CSR -> owned arrays in the caller's format, index widths, base and value type.
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "formats/convert.hpp"
#include "formats/raw.hpp"
#include "formats/values.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

// The integers v[i] + base as an array of `type`.
template <typename T>
std::vector<unsigned char> write_typed(const std::vector<int64_t>& v, int64_t base) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  unsigned char* dst = out.data();
  const int64_t* src = v.data();
  parallel_chunks(int64_t(v.size()), 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T x = T(src[i] + base);
      std::memcpy(dst + size_t(i) * sizeof(T), &x, sizeof(T));
    }
  });
  return out;
}

std::vector<unsigned char> write_indices(sparsetc_index_type_t type, const std::vector<int64_t>& v, int64_t base) {
  return type == SPARSETC_INDEX_32 ? write_typed<int32_t>(v, base) : write_typed<int64_t>(v, base);
}

template <typename V>
std::vector<unsigned char> write_values(const std::vector<V>& values, sparsetc_value_type_t type) {
  std::vector<unsigned char> out(values.size() * value_size(type));
  store_values(values.data(), int64_t(values.size()), type, out.data());
  return out;
}

}  // namespace

template <typename V>
OwnedArrays export_csr(const CsrMatrix<V>& csr, sparsetc_format_t format, sparsetc_index_type_t offset_type,
                       sparsetc_index_type_t index_type, sparsetc_index_base_t base, sparsetc_value_type_t value_type) {
  const auto invalid = SPARSETC_STATUS_INVALID_VALUE;
  require(format == SPARSETC_FORMAT_CSR || format == SPARSETC_FORMAT_CSC || format == SPARSETC_FORMAT_COO, invalid,
          "unknown format ", format);
  require(is_valid_index_type(offset_type), invalid, "unknown offset type ", offset_type);
  require(is_valid_index_type(index_type), invalid, "unknown index type ", index_type);
  require(is_valid_base(base), invalid, "unknown index base ", base);
  require(is_valid_value_type(value_type), invalid, "unknown value type ", value_type);
  require(format != SPARSETC_FORMAT_COO || offset_type == index_type, SPARSETC_STATUS_TYPE_MISMATCH,
          "COO row and column indices must have one type, but offset_type is ", index_type_name(offset_type),
          " and index_type is ", index_type_name(index_type));
  require(int64_t(csr.row_ptr.size()) == csr.rows + 1 && !csr.row_ptr.empty(), invalid, "malformed CSR: ",
          csr.row_ptr.size(), " offsets for ", csr.rows, " rows");

  // The same limits as validate_raw, so that what is exported validates.
  const auto overflow = SPARSETC_STATUS_SIZE_OVERFLOW;
  if (index_type == SPARSETC_INDEX_32) {
    require(csr.rows <= kInt32Max, overflow, "rows = ", csr.rows, " does not fit int32 indices (at most ", kInt32Max,
            ")");
    require(csr.cols <= kInt32Max, overflow, "cols = ", csr.cols, " does not fit int32 indices (at most ", kInt32Max,
            ")");
  }
  if (format != SPARSETC_FORMAT_COO && offset_type == SPARSETC_INDEX_32) {
    const int64_t last = csr.row_ptr.back();  // = nnz, the largest offset
    require(last + base <= kInt32Max, overflow, "nnz = ", last, " does not fit int32 offsets (at most ",
            kInt32Max - base, " with base ", base, ")");
  }

  OwnedArrays out;
  switch (format) {
    case SPARSETC_FORMAT_CSR:
      out.offsets = write_indices(offset_type, csr.row_ptr, base);
      out.indices = write_indices(index_type, csr.col_idx, base);
      out.values = write_values(csr.values, value_type);
      break;
    case SPARSETC_FORMAT_CSC: {
      const CscMatrix<V> csc = csr_to_csc(csr);
      out.offsets = write_indices(offset_type, csc.col_ptr, base);
      out.indices = write_indices(index_type, csc.row_idx, base);
      out.values = write_values(csc.values, value_type);
      break;
    }
    default: {
      const CooMatrix<V> coo = csr_to_coo(csr);
      out.offsets = write_indices(offset_type, coo.row_idx, base);
      out.indices = write_indices(index_type, coo.col_idx, base);
      out.values = write_values(coo.values, value_type);
      break;
    }
  }
  return out;
}

template OwnedArrays export_csr<float>(const CsrMatrix<float>&, sparsetc_format_t, sparsetc_index_type_t,
                                       sparsetc_index_type_t, sparsetc_index_base_t, sparsetc_value_type_t);
template OwnedArrays export_csr<double>(const CsrMatrix<double>&, sparsetc_format_t, sparsetc_index_type_t,
                                        sparsetc_index_type_t, sparsetc_index_base_t, sparsetc_value_type_t);

}  // namespace sparsetc::detail
