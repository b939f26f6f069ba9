// SpGEMM on the CPU engine: Gustavson with a sparse accumulator (cpu/spgemm.cpp), split into the
// plan's symbolic and numeric phases so AMG-style callers recompute only values.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_plan.hpp"
#include "formats/convert.hpp"
#include "formats/values.hpp"
#include "reorder/permutation.hpp"

namespace sparsetc::detail {
namespace {

template <typename V>
class CpuSpgemm final : public SpgemmExecutor {
 public:
  CpuSpgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) : handle_(handle), problem_(problem) {
    load_operands();
    products_ = cpu_count_products(*A_, *B_, handle.threads);
  }

  int64_t products() const override { return products_; }

  size_t memory_estimate() const override {
    // C can hold at most min(products, rows * cols) entries; the accumulators are one dense row a thread.
    const int64_t cap = std::min<int64_t>(products_, A_->rows * B_->cols);
    return size_t(cap) * (sizeof(int64_t) + sizeof(V)) + size_t(A_->rows + 1) * sizeof(int64_t) +
           size_t(resolve_threads(handle_.threads)) * size_t(B_->cols) * (sizeof(int64_t) + sizeof(V));
  }

  int64_t symbolic() override {
    pattern_ = cpu_spgemm_symbolic(*A_, *B_, handle_.threads);
    return pattern_.nnz();
  }

  void numeric(sparsetc_matrix_s** C) override {
    if (versions_ != std::make_pair(problem_.A->values_version, problem_.B->values_version)) load_operands();
    CsrMatrix<V> product = pattern_;  // the pattern is kept for the next numeric call
    cpu_spgemm_numeric(*A_, *B_, product, handle_.threads);
    if (problem_.drop_tolerance >= 0) drop_small(product);
    const sparsetc_value_type_t value_type = std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
    if (!*C) {
      *C = make_host_matrix(product, SPARSETC_INDEX_64, spgemm_index_type(product.cols), value_type).release();
      return;
    }
    sparsetc_matrix_s& out = **C;
    require(problem_.drop_tolerance < 0, SPARSETC_STATUS_INVALID_VALUE,
            "with a drop tolerance the pattern of C depends on the values: pass *C == NULL for a new matrix");
    require(out.memory == SPARSETC_MEMORY_HOST && out.layout.format == SPARSETC_FORMAT_CSR &&
                out.layout.rows == product.rows && out.layout.cols == product.cols &&
                out.layout.nnz == product.nnz() && out.layout.value_type == value_type &&
                out.ownership == SPARSETC_COPY,
            SPARSETC_STATUS_INVALID_VALUE, "*C was not made by this plan (shape, nnz, type or memory differ)");
    store_values(product.values.data(), product.nnz(), value_type, out.host_storage.values.data());
    mark_values_changed(out);
  }

 private:
  // Reordered operands (src/reorder/) are put back in their original row order first, so C is in
  // A's original row order (op(A) = A), or its inner dimension matches (op(A) = A^T: A's rows are
  // the inner dimension; likewise B's rows for op(B) = B, and C's columns for op(B) = B^T).
  void load_operands() {
    auto a = original_order(*problem_.A);
    auto b = original_order(*problem_.B);
    A_ = problem_.op_a == SPARSETC_OP_TRANSPOSE ? std::make_shared<const CsrMatrix<V>>(transpose(*a)) : a;
    B_ = problem_.op_b == SPARSETC_OP_TRANSPOSE ? std::make_shared<const CsrMatrix<V>>(transpose(*b)) : b;
    versions_ = {problem_.A->values_version, problem_.B->values_version};
  }

  std::shared_ptr<const CsrMatrix<V>> original_order(sparsetc_matrix_s& m) const {
    auto stored = canonical_csr<V>(m, m.duplicates);
    if (m.row_permutation.empty()) return stored;
    return std::make_shared<const CsrMatrix<V>>(reorder::restore_row_order(*stored, m.row_permutation, handle_.threads));
  }

  void drop_small(CsrMatrix<V>& c) const {
    int64_t kept = 0;
    std::vector<int64_t> row_ptr(size_t(c.rows + 1), 0);
    for (int64_t i = 0; i < c.rows; ++i) {
      for (int64_t p = c.row_ptr[size_t(i)]; p < c.row_ptr[size_t(i + 1)]; ++p) {
        if (std::fabs(double(c.values[size_t(p)])) <= problem_.drop_tolerance) continue;
        c.col_idx[size_t(kept)] = c.col_idx[size_t(p)];
        c.values[size_t(kept++)] = c.values[size_t(p)];
      }
      row_ptr[size_t(i + 1)] = kept;
    }
    c.row_ptr = std::move(row_ptr);
    c.col_idx.resize(size_t(kept));
    c.values.resize(size_t(kept));
  }

  sparsetc_handle_s& handle_;
  SpgemmProblem problem_;
  std::shared_ptr<const CsrMatrix<V>> A_, B_;
  std::pair<uint64_t, uint64_t> versions_;
  int64_t products_ = 0;
  CsrMatrix<V> pattern_;
};

}  // namespace

std::unique_ptr<SpgemmExecutor> make_cpu_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) {
  if (problem.compute == SPARSETC_COMPUTE_64F) return std::make_unique<CpuSpgemm<double>>(handle, problem);
  return std::make_unique<CpuSpgemm<float>>(handle, problem);
}

}  // namespace sparsetc::detail
