// SpMM on the CPU engine: dense operands of any value type are brought to the compute type
// (float or double) only when they differ from it, so f32 and f64 callers pay no copy.
#include <vector>

#include "core/error.hpp"
#include "core/types.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "formats/convert.hpp"
#include "formats/values.hpp"
#include "reorder/permutation.hpp"

namespace sparsetc::detail {
namespace {

template <typename V>
constexpr sparsetc_value_type_t value_type_of() {
  return std::is_same_v<V, float> ? SPARSETC_VALUE_F32 : SPARSETC_VALUE_F64;
}

// Element count spanned by a dense matrix in memory (ld * outer extent).
size_t span(const sparsetc_dense_s& d) {
  const int64_t outer = d.order == SPARSETC_ORDER_ROW ? d.rows : d.cols;
  return outer == 0 ? 0 : size_t((outer - 1) * d.ld + (d.order == SPARSETC_ORDER_ROW ? d.cols : d.rows));
}

template <typename V>
class CpuSpmm final : public SpmmExecutor {
 public:
  CpuSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem) : handle_(handle), problem_(problem) {
    load_matrix();  // converted once, at planning
  }

  size_t workspace_size() const override { return 0; }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void*,
               size_t) override {
    refresh_matrix();
    std::vector<V> b_copy, c_copy;
    const V* b = widen(B, b_copy);
    V* c = C.value_type == value_type_of<V>() ? static_cast<V*>(C.values) : nullptr;
    if (!c) {
      // Loaded even when beta == 0: the copy is written back whole, padding between columns included.
      c_copy.resize(span(C));
      load_values(C.values, C.value_type, int64_t(c_copy.size()), c_copy.data());
      c = c_copy.data();
    }
    DenseView<const V> bv{b, B.rows, B.cols, B.ld, B.order};
    DenseView<V> cv{c, C.rows, C.cols, C.ld, C.order};
    cpu_spmm<V>(*A_, SPARSETC_OP_NON_TRANSPOSE, bv, cv, V(alpha), V(beta), handle_.threads);
    if (!c_copy.empty()) store_values(c_copy.data(), int64_t(c_copy.size()), C.value_type, C.values);
  }

 private:
  // op(A) as a CSR matrix; A^T is built once per values version, not at every execution.
  // A reordered A (src/reorder/) is put back in its original row order first: C then comes out in
  // the original row order, and A^T's columns (the inner dimension of A^T B) match B's rows.
  void load_matrix() {
    auto a = canonical_csr<V>(*problem_.A, problem_.A->duplicates);
    if (!problem_.A->row_permutation.empty())
      a = std::make_shared<const CsrMatrix<V>>(reorder::restore_row_order(*a, problem_.A->row_permutation, handle_.threads));
    A_ = problem_.op == SPARSETC_OP_TRANSPOSE ? std::make_shared<const CsrMatrix<V>>(transpose(*a)) : a;
    version_ = problem_.A->values_version;
  }

  // set_values on A since planning: take the new values.
  void refresh_matrix() {
    if (version_ != problem_.A->values_version) load_matrix();
  }

  const V* widen(const sparsetc_dense_s& d, std::vector<V>& copy) const {
    if (d.value_type == value_type_of<V>()) return static_cast<const V*>(d.values);
    copy.resize(span(d));
    load_values(d.values, d.value_type, int64_t(copy.size()), copy.data());
    return copy.data();
  }

  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  std::shared_ptr<const CsrMatrix<V>> A_;
  uint64_t version_ = 0;
};

}  // namespace

std::unique_ptr<SpmmExecutor> make_cpu_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem) {
  if (problem.compute == SPARSETC_COMPUTE_64F) return std::make_unique<CpuSpmm<double>>(handle, problem);
  // fp32 and tf32 both run in fp32 on the CPU (tf32 is a tensor-core rounding; fp32 is at least as accurate).
  return std::make_unique<CpuSpmm<float>>(handle, problem);
}

}  // namespace sparsetc::detail
