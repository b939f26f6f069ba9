// Sparse arrays exactly as a caller gives them (any index width, base and value type, host
// memory), their validation, and the import into / export from the canonical CSR.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/sparse.hpp"
#include "sparsetc/sparsetc_types.h"

namespace sparsetc::detail {

struct RawSparse {
  sparsetc_format_t format = SPARSETC_FORMAT_CSR;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t nnz = 0;
  const void* offsets = nullptr;  // CSR: rows+1 row offsets; CSC: cols+1 column offsets; COO: row indices
  const void* indices = nullptr;  // CSR: column indices; CSC: row indices; COO: column indices
  const void* values = nullptr;
  sparsetc_index_type_t offset_type = SPARSETC_INDEX_64;  // COO: type of the row indices (= index_type)
  sparsetc_index_type_t index_type = SPARSETC_INDEX_32;
  sparsetc_index_base_t base = SPARSETC_BASE_ZERO;
  sparsetc_value_type_t value_type = SPARSETC_VALUE_F64;
};

// Checks raw arrays at a level; throws Error with the first offender:
//  ARGUMENTS: known enums, rows/cols/nnz >= 0, non-null arrays where nnz > 0 (offsets of CSR/CSC
//             always), COO with offset_type == index_type, sizes fit the index types;
//  STRUCTURE: INVALID_ROW_OFFSETS (offsets[0] != base, decreasing, offsets[last] != nnz + base),
//             INVALID_INDEX (index outside [base, base + extent)), UNSORTED_INDICES and
//             DUPLICATE_ENTRY within a row (CSR) or column (CSC); for COO, indices in range and,
//             with SPARSETC_DUPLICATES_ERROR, no repeated (row, column);
//  VALUES:    NAN_OR_INF.
// Messages name what, where (row/column/entry, in the caller's base) and the bad value, e.g.
// "column index 1048577 out of range [0, 1048576) at row 42, entry 7"; with base one every
// position is one-based and the message ends in " (1-based)". int32 indices need rows and cols
// <= 2^31 - 1 (both dimensions, whatever the format); int32 offsets need nnz + base <= 2^31 - 1.
// The first offender is the one at the smallest position (entry order; for COO duplicates, the
// entry that repeats an earlier one and comes first), whatever the thread schedule.
void validate_raw(const RawSparse& raw, sparsetc_validation_t level, sparsetc_duplicates_t duplicates);

// Any raw format to canonical CSR (zero-based, sorted). Assumes validate_raw passed at
// STRUCTURE level for CSR/CSC; COO is sorted and its duplicates treated per `duplicates`.
template <typename V>
CsrMatrix<V> import_csr(const RawSparse& raw, sparsetc_duplicates_t duplicates);

// Arrays in the caller's types, owned.
struct OwnedArrays {
  std::vector<unsigned char> offsets;
  std::vector<unsigned char> indices;
  std::vector<unsigned char> values;
};

// Canonical CSR to `format` with the given types. Throws SIZE_OVERFLOW when an offset or index
// does not fit its type, VALUE_OUT_OF_RANGE when a value does not fit value_type.
template <typename V>
OwnedArrays export_csr(const CsrMatrix<V>& csr, sparsetc_format_t format, sparsetc_index_type_t offset_type,
                       sparsetc_index_type_t index_type, sparsetc_index_base_t base, sparsetc_value_type_t value_type);

}  // namespace sparsetc::detail
