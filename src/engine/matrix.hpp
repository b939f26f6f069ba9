// The sparse matrix object behind sparsetc_matrix_t: the caller's layout (formats/raw.hpp), the
// memory that holds it, and the canonical host CSR derived from it on demand.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "formats/raw.hpp"
#include "formats/sparse.hpp"
#include "gpu/device_memory.hpp"
#include "sparsetc/sparsetc_types.h"

struct sparsetc_matrix_s {
  sparsetc::detail::RawSparse layout;  // pointers into storage (owned) or into the caller's arrays
  sparsetc_memory_t memory = SPARSETC_MEMORY_HOST;
  sparsetc_ownership_t ownership = SPARSETC_COPY;
  int device = -1;  // where device arrays live
  sparsetc_duplicates_t duplicates = SPARSETC_DUPLICATES_ERROR;  // COO: the policy it was created with

  // Owned storage: host arrays or device buffers, whichever memory says.
  sparsetc::detail::OwnedArrays host_storage;
  sparsetc::detail::DeviceBuffer device_offsets, device_indices, device_values;

  // Bumped whenever the values change, so plans know to re-read them.
  uint64_t values_version = 0;

  // Row reordering (src/reorder/): stored row i is original row row_permutation[i]; empty means
  // the identity (not reordered). Multiplies answer in the original row order. group_ptr: the
  // groups of the blocking over stored rows (groups + 1 offsets), empty when none is recorded.
  std::vector<int64_t> row_permutation;
  std::vector<int64_t> group_ptr;

  // Canonical host CSR caches (float and double), built on first use, dropped on set_values.
  std::mutex cache_mutex;
  std::shared_ptr<const sparsetc::detail::CsrMatrix<float>> csr_f32;
  std::shared_ptr<const sparsetc::detail::CsrMatrix<double>> csr_f64;
};

namespace sparsetc::detail {

// Creates a matrix from the caller's arrays (validated at the handle's level, copied or borrowed).
std::unique_ptr<sparsetc_matrix_s> make_matrix(sparsetc_handle_s& handle, const RawSparse& raw,
                                               sparsetc_memory_t memory, sparsetc_ownership_t ownership);
// Creates an owning host matrix holding a canonical CSR in the given types.
template <typename V>
std::unique_ptr<sparsetc_matrix_s> make_host_matrix(const CsrMatrix<V>& csr, sparsetc_index_type_t offset_type,
                                                    sparsetc_index_type_t index_type,
                                                    sparsetc_value_type_t value_type);
// The canonical host CSR of a host matrix (built once and cached; shared by plans).
template <typename V>
std::shared_ptr<const CsrMatrix<V>> canonical_csr(sparsetc_matrix_s& matrix, sparsetc_duplicates_t duplicates);
// Copies a matrix to the other memory space (owning result).
std::unique_ptr<sparsetc_matrix_s> copy_matrix_to(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix,
                                                  sparsetc_memory_t memory);
// Replaces the values (same pattern).
void set_matrix_values(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix, const void* values);
// Drops the canonical caches and bumps the values version after the values changed in place.
void mark_values_changed(sparsetc_matrix_s& matrix);
// Validates a matrix at a level (device matrices are copied to the host for it).
void check_matrix(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix, sparsetc_validation_t level);
// The matrix's raw arrays in host memory (a copy for device matrices, the arrays themselves else).
struct HostView {
  RawSparse raw;
  OwnedArrays copy;  // holds the data when it had to be downloaded
};
HostView host_view(sparsetc_handle_s& handle, sparsetc_matrix_s& matrix);

}  // namespace sparsetc::detail

namespace sparsetc::detail {

// Converts a device matrix to CSR or CSC with the given types on the GPU (no host round trip).
std::unique_ptr<sparsetc_matrix_s> convert_on_device(sparsetc_handle_s& handle, sparsetc_matrix_s& source,
                                                     sparsetc_format_t format, sparsetc_index_type_t offset_type,
                                                     sparsetc_index_type_t index_type, sparsetc_index_base_t base,
                                                     sparsetc_value_type_t value_type);

}  // namespace sparsetc::detail
