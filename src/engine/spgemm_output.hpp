// The product C of the device SpGEMM paths as a library matrix: device CSR, offsets int32 when
// nnz + base fits (else int64), int32 indices, the given base; the values are taken over.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/matrix.hpp"
#include "gpu/device_memory.hpp"
#include "sparsetc/sparsetc_types.h"

struct sparsetc_handle_s;

namespace sparsetc::detail {

// The offsets type of C for nnz entries and the base.
inline sparsetc_index_type_t spgemm_offset_type(int64_t nnz, sparsetc_index_base_t base) {
  return nnz + int64_t(base) <= INT32_MAX ? SPARSETC_INDEX_32 : SPARSETC_INDEX_64;
}

std::unique_ptr<sparsetc_matrix_s> make_device_csr_output(sparsetc_handle_s& handle, int64_t rows, int64_t cols,
                                                          int64_t nnz, const int64_t* row_ptr, const int32_t* col_idx,
                                                          DeviceBuffer values, sparsetc_index_base_t base,
                                                          sparsetc_value_type_t value_type);

}  // namespace sparsetc::detail
