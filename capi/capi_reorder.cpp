// Row reordering entry points: reorder with a method (1-SA, SA, identity, AUTO), read a matrix's
// permutation and groups, apply a caller's permutation, and measure a blocking's quality.
#include <algorithm>
#include <cstring>
#include <memory>
#include <numeric>

#include "capi_guard.hpp"
#include "core/logging.hpp"
#include "core/types.hpp"
#include "engine/matrix.hpp"
#include "reorder/permutation.hpp"
#include "reorder/reorder.hpp"

using namespace sparsetc;
namespace ro = sparsetc::detail::reorder;

namespace {

struct ReadOptions {
  ro::Options engine;
  double auto_min_reduction = 0.05;
};

// Append-only reading: fields past struct_size keep their defaults; zeros mean defaults.
ReadOptions read_options(const sparsetc_reorder_options_t* in, int threads) {
  ReadOptions out;
  out.engine.threads = threads;
  if (!in) return out;
  detail::require(in->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                  "options->struct_size is not set (set it to sizeof(sparsetc_reorder_options_t))");
  sparsetc_reorder_options_t o;
  std::memset(&o, 0, sizeof o);
  std::memcpy(&o, in, std::min(in->struct_size, sizeof o));
  detail::require(o.tau == 0 || (o.tau > 0 && o.tau <= 1), SPARSETC_STATUS_INVALID_VALUE,
                  "options->tau must be in (0, 1] (0 for the default 0.5), got ", o.tau);
  detail::require(o.block_width >= 0, SPARSETC_STATUS_INVALID_VALUE,
                  "options->block_width must be >= 1 (0 for the default 8), got ", o.block_width);
  detail::require(o.block_height >= 0, SPARSETC_STATUS_INVALID_VALUE,
                  "options->block_height must be >= 1 (0 for the default 16), got ", o.block_height);
  detail::require(o.max_group_height >= 0, SPARSETC_STATUS_INVALID_VALUE,
                  "options->max_group_height must be >= 0 (0: unlimited), got ", o.max_group_height);
  detail::require(o.pad_groups == 0 || o.pad_groups == 1, SPARSETC_STATUS_INVALID_VALUE,
                  "options->pad_groups must be 0 or 1, got ", o.pad_groups);
  detail::require(o.auto_min_reduction >= 0 && o.auto_min_reduction < 1, SPARSETC_STATUS_INVALID_VALUE,
                  "options->auto_min_reduction must be in [0, 1) (0 for the default 0.05), got ", o.auto_min_reduction);
  if (o.tau != 0) out.engine.tau = o.tau;
  if (o.block_width != 0) out.engine.block_width = o.block_width;
  if (o.block_height != 0) out.engine.block_height = o.block_height;
  out.engine.max_group_height = o.max_group_height;
  out.engine.pad_groups = o.pad_groups != 0;
  if (o.auto_min_reduction != 0) out.auto_min_reduction = o.auto_min_reduction;
  return out;
}

// The stored rows of any matrix as a canonical host CSR (device matrices are downloaded).
std::shared_ptr<const detail::CsrMatrix<double>> stored_rows(sparsetc_handle_s& handle, sparsetc_matrix_s& m) {
  if (m.memory == SPARSETC_MEMORY_HOST) return detail::canonical_csr<double>(m, m.duplicates);
  detail::HostView view = detail::host_view(handle, m);
  return std::make_shared<const detail::CsrMatrix<double>>(detail::import_csr<double>(view.raw, m.duplicates));
}

ro::Pattern pattern_of(const detail::CsrMatrix<double>& m) {
  return {m.rows, m.cols, m.row_ptr.data(), m.col_idx.data()};
}

// A new matrix holding `rows` (A's stored rows gathered by `permutation`) as CSR in A's types and
// memory space, remembering the permutation composed with A's and the groups.
sparsetc_matrix_t make_reordered(sparsetc_handle_s& handle, sparsetc_matrix_s& A, const detail::CsrMatrix<double>& rows,
                                 const std::vector<int64_t>& permutation, std::vector<int64_t> group_ptr) {
  const detail::RawSparse& l = A.layout;
  auto host = std::make_unique<sparsetc_matrix_s>();
  host->host_storage = detail::export_csr(rows, SPARSETC_FORMAT_CSR, l.offset_type, l.index_type, l.base, l.value_type);
  host->layout = detail::RawSparse{SPARSETC_FORMAT_CSR, rows.rows, rows.cols, rows.nnz(),
                                   host->host_storage.offsets.data(),
                                   host->host_storage.indices.empty() ? nullptr : host->host_storage.indices.data(),
                                   host->host_storage.values.empty() ? nullptr : host->host_storage.values.data(),
                                   l.offset_type, l.index_type, l.base, l.value_type};
  std::unique_ptr<sparsetc_matrix_s> out =
      A.memory == SPARSETC_MEMORY_HOST ? std::move(host) : detail::copy_matrix_to(handle, *host, SPARSETC_MEMORY_DEVICE);
  std::vector<int64_t> composed = ro::compose(A.row_permutation, permutation);
  if (!ro::is_identity(composed)) out->row_permutation = std::move(composed);
  out->group_ptr = std::move(group_ptr);
  return out.release();
}

const char* method_name(ro::Method m) {
  return m == ro::Method::one_sa ? "1-SA" : m == ro::Method::sa ? "SA" : "identity";
}

}  // namespace

extern "C" {

sparsetc_status_t sparsetc_matrix_reorder(sparsetc_handle_t handle, sparsetc_matrix_t A,
                                          sparsetc_reorder_method_t method, const sparsetc_reorder_options_t* options,
                                          sparsetc_matrix_t* reordered) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(reordered, "reordered");
    *reordered = nullptr;
    detail::require(method >= SPARSETC_REORDER_IDENTITY && method <= SPARSETC_REORDER_AUTO,
                    SPARSETC_STATUS_INVALID_VALUE, "unknown reordering method ", method);
    const ReadOptions o = read_options(options, handle->threads);
    const auto rows = stored_rows(*handle, *A);
    const ro::Pattern p = pattern_of(*rows);
    ro::Blocking blocking;
    ro::Method used = ro::Method::identity;
    ro::Stats stats;
    switch (method) {
      case SPARSETC_REORDER_IDENTITY:
        blocking = ro::run(p, ro::Method::identity, o.engine);
        break;
      case SPARSETC_REORDER_ONE_SA:
        used = ro::Method::one_sa;
        blocking = ro::one_sa(p, o.engine, &stats);
        break;
      case SPARSETC_REORDER_SA:
        used = ro::Method::sa;
        blocking = ro::sa(p, o.engine, &stats);
        break;
      default: {
        ro::AutoChoice choice = ro::choose(p, o.engine, o.auto_min_reduction, &stats);
        used = choice.method;
        blocking = std::move(choice.blocking);
      }
    }
    SPARSETC_LOG(info, "reorder ", rows->rows, "x", rows->cols, " nnz ", rows->nnz(), ": ", method_name(used), ", tau ",
                 o.engine.tau, ", block width ", o.engine.block_width, ", ", blocking.groups(), " groups (",
                 stats.classes, " compressed rows) in ", stats.seconds_total, " s");
    const detail::CsrMatrix<double> gathered = ro::gather_rows(*rows, blocking.permutation, handle->threads);
    *reordered = make_reordered(*handle, *A, gathered, blocking.permutation, std::move(blocking.group_ptr));
  });
}

sparsetc_status_t sparsetc_matrix_get_permutation(sparsetc_matrix_t matrix, int64_t* permutation, int64_t* groups,
                                                  int64_t* group_ptr) {
  return SPARSETC_GUARD(nullptr, {
    capi::require_pointer(matrix, "matrix");
    const int64_t rows = matrix->layout.rows;
    if (permutation) {
      if (matrix->row_permutation.empty()) std::iota(permutation, permutation + rows, int64_t(0));
      else std::copy(matrix->row_permutation.begin(), matrix->row_permutation.end(), permutation);
    }
    const int64_t count = matrix->group_ptr.empty() ? 0 : int64_t(matrix->group_ptr.size()) - 1;
    if (groups) *groups = count;
    if (group_ptr) {
      if (count == 0) group_ptr[0] = 0;
      else std::copy(matrix->group_ptr.begin(), matrix->group_ptr.end(), group_ptr);
    }
  });
}

sparsetc_status_t sparsetc_matrix_permute_rows(sparsetc_handle_t handle, sparsetc_matrix_t A,
                                               const int64_t* permutation, sparsetc_matrix_t* result) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(A, "A");
    capi::require_pointer(result, "result");
    *result = nullptr;
    const int64_t rows = A->layout.rows;
    detail::require(permutation != nullptr || rows == 0, SPARSETC_STATUS_NULL_POINTER, "permutation is NULL");
    ro::check_permutation(permutation, rows);
    const std::vector<int64_t> perm(permutation, permutation + rows);
    const auto stored = stored_rows(*handle, *A);
    const detail::CsrMatrix<double> gathered = ro::gather_rows(*stored, perm, handle->threads);
    *result = make_reordered(*handle, *A, gathered, perm, {});
  });
}

sparsetc_status_t sparsetc_matrix_get_reorder_quality(sparsetc_handle_t handle, sparsetc_matrix_t matrix,
                                                      int64_t block_height, int64_t block_width,
                                                      sparsetc_reorder_quality_t* quality) {
  return SPARSETC_GUARD(handle, {
    capi::require_pointer(handle, "handle");
    capi::require_pointer(matrix, "matrix");
    capi::require_pointer(quality, "quality");
    detail::require(quality->struct_size >= sizeof(size_t), SPARSETC_STATUS_INVALID_VALUE,
                    "quality->struct_size is not set (set it to sizeof(sparsetc_reorder_quality_t))");
    detail::require(block_height >= 0 && block_width >= 0, SPARSETC_STATUS_INVALID_VALUE,
                    "block height and width must be >= 1 (0 for 16 and 8), got ", block_height, "x", block_width);
    if (block_height == 0) block_height = 16;
    if (block_width == 0) block_width = 8;
    const auto rows = stored_rows(*handle, *matrix);
    const ro::Quality q = ro::measure(pattern_of(*rows), nullptr, matrix->group_ptr, block_height, block_width,
                                      handle->threads);
    sparsetc_reorder_quality_t full{quality->struct_size,
                                    q.block_height,
                                    q.block_width,
                                    q.blocks,
                                    q.in_block_density,
                                    q.block_rows,
                                    q.blocks_per_block_row_mean,
                                    q.blocks_per_block_row_std,
                                    q.blocks_per_block_row_max,
                                    q.groups,
                                    q.mean_group_height,
                                    q.vbr_blocks,
                                    q.vbr_in_block_density,
                                    q.vbr_mean_block_height};
    std::memcpy(quality, &full, std::min(quality->struct_size, sizeof full));  // append-only
  });
}

}  // extern "C"
