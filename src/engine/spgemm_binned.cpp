// SpGEMM through the binned merge-path pipeline on the GPU (gpu/spgemm/binned/): the executor of
// SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH, and of AUTO for device operands.
//
// Plan: create = operands to canonical device CSR of op(A), op(B) + stage 1 (product count, memory
// estimate, panel plan); symbolic = stages 2-4, keeping C's pattern and first values; numeric =
// C from them (the first time after symbolic, with unchanged operand values), else the values
// recomputed by the numeric-only kernel on the kept pattern (bit-identical to the full product).
#include <memory>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_output.hpp"
#include "engine/spgemm_plan.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"

namespace sparsetc::detail {
namespace {

template <typename V>
class BinnedSpgemmExecutor final : public SpgemmExecutor {
 public:
  BinnedSpgemmExecutor(sparsetc_handle_s& handle, const SpgemmProblem& problem) : handle_(handle), problem_(problem) {
    require(problem.A->memory == SPARSETC_MEMORY_DEVICE && problem.B->memory == SPARSETC_MEMORY_DEVICE,
            SPARSETC_STATUS_NOT_SUPPORTED, "the binned SpGEMM needs operands in device memory");
    handle_.activate();
    load_operands(true);
    make_pipeline();
  }

  int64_t products() const override { return pipeline_->products(); }
  size_t memory_estimate() const override { return pipeline_->memory_estimate(); }

  int64_t symbolic() override {
    handle_.activate();
    if (versions_ != current_versions()) {
      reload();
      make_pipeline();  // it holds views of the operands
    }
    c_ = pipeline_->multiply();
    first_values_ready_ = true;
    return c_.nnz;
  }

  void numeric(sparsetc_matrix_s** C) override {
    handle_.activate();
    const GpuContext context = handle_.gpu();
    const bool changed = versions_ != current_versions();
    if (changed) reload();
    const bool reuse_first = first_values_ready_ && !changed;
    first_values_ready_ = false;
    if (*C) {
      require(problem_.drop_tolerance < 0, SPARSETC_STATUS_INVALID_VALUE,
              "with a drop tolerance the pattern of C depends on the values: pass *C == NULL for a new matrix");
      sparsetc_matrix_s& out = **C;
      require(out.memory == SPARSETC_MEMORY_DEVICE && out.layout.format == SPARSETC_FORMAT_CSR &&
                  out.layout.rows == c_.rows && out.layout.cols == c_.cols && out.layout.nnz == c_.nnz &&
                  out.layout.value_type == value_type() && out.layout.index_type == SPARSETC_INDEX_32 &&
                  out.layout.offset_type == offset_type(c_.nnz) && out.ownership == SPARSETC_COPY,
              SPARSETC_STATUS_INVALID_VALUE, "*C was not made by this plan (shape, nnz, types or memory differ)");
      V* values = static_cast<V*>(const_cast<void*>(out.layout.values));
      if (reuse_first) copy_device_to_device(values, c_.values.data(), size_t(c_.nnz) * sizeof(V), context.stream);
      else binned_numeric(a_.view(), b().view(), c_.view(), values, context);
      mark_values_changed(out);
      return;
    }
    DeviceBuffer values;
    if (reuse_first) {
      values = std::move(c_.values);  // the plan recomputes them if asked again
    } else {
      values = DeviceBuffer(size_t(c_.nnz) * sizeof(V), context);
      binned_numeric(a_.view(), b().view(), c_.view(), static_cast<V*>(values.data()), context);
    }
    DeviceCsrView<V> product = c_.view();
    product.values = static_cast<const V*>(values.data());
    if (problem_.drop_tolerance >= 0) {
      DeviceCsr<V> kept = binned::drop_small(product, problem_.drop_tolerance, context);
      *C = make_output(kept.view(), std::move(kept.values)).release();
      return;
    }
    *C = make_output(product, std::move(values)).release();
  }

 private:
  static sparsetc_value_type_t value_type() {
    return std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  }
  sparsetc_index_type_t offset_type(int64_t nnz) const { return spgemm_offset_type(nnz, problem_.A->layout.base); }
  std::pair<uint64_t, uint64_t> current_versions() const {
    return {problem_.A->values_version, problem_.B->values_version};
  }
  bool b_is_a() const { return problem_.B == problem_.A && problem_.op_b == problem_.op_a; }
  const DeviceCsr<V>& b() const { return b_is_a() ? a_ : b_; }

  // The pipeline, reading the order checks the operands left pending along with its stage 2; an
  // operand found unsorted (or B with repeats) is settled and the pipeline made again.
  void make_pipeline() {
    BinnedSpgemmOptions options;
    options.memory_budget = problem_.memory_budget;
    options.b_rows_unique = b_unique_;
    const GpuContext context = handle_.gpu();
    const binned::PendingRowOrder* b_order = b_is_a() ? &a_order_ : &b_order_;
    pipeline_ = std::make_unique<BinnedSpgemm<V>>(a_.view(), b().view(), options, context, &a_order_, b_order);
    const binned::RowOrder a_found = pipeline_->row_order(0), b_found = pipeline_->row_order(1);
    a_order_ = {};
    b_order_ = {};
    if (pipeline_->usable()) return;
    pipeline_.reset();
    const bool a_unique = binned::settle_row_order(a_, a_found, context);
    b_unique_ = b_is_a() ? a_unique : binned::settle_row_order(b_, b_found, context);
    options.b_rows_unique = b_unique_;
    pipeline_ = std::make_unique<BinnedSpgemm<V>>(a_.view(), b().view(), options, context);
  }

  // With `pending`, a CSR operand read in place leaves its order check for make_pipeline.
  void load_operands(bool pending) {
    const GpuContext context = handle_.gpu();
    bool a_unique = true, b_unique = true;
    a_ = binned::prepare_operand<V>(problem_.A->layout, problem_.A->duplicates, problem_.op_a == SPARSETC_OP_TRANSPOSE,
                                    context, &a_unique, pending ? &a_order_ : nullptr);
    if (!b_is_a())
      b_ = binned::prepare_operand<V>(problem_.B->layout, problem_.B->duplicates,
                                      problem_.op_b == SPARSETC_OP_TRANSPOSE, context, &b_unique,
                                      pending ? &b_order_ : nullptr);
    b_unique_ = b_is_a() ? a_unique : b_unique;
    versions_ = current_versions();
  }

  // New values with the same patterns (the plan's contract): the operands again, same shapes.
  void reload() {
    const int64_t a_nnz = a_.nnz, b_nnz = b().nnz;
    load_operands(false);
    require(a_.nnz == a_nnz && b().nnz == b_nnz, SPARSETC_STATUS_INVALID_VALUE,
            "the operands' patterns changed since the plan was made (make a new plan)");
  }

  std::unique_ptr<sparsetc_matrix_s> make_output(const DeviceCsrView<V>& c, DeviceBuffer values) const {
    return make_device_csr_output(handle_, c.rows, c.cols, c.nnz, c.row_ptr, c.col_idx, std::move(values),
                                  problem_.A->layout.base, value_type());
  }

  sparsetc_handle_s& handle_;
  SpgemmProblem problem_;
  DeviceCsr<V> a_, b_;
  std::pair<uint64_t, uint64_t> versions_;
  binned::PendingRowOrder a_order_, b_order_;  // checks not read yet (load_operands to make_pipeline)
  bool b_unique_ = true;
  std::unique_ptr<BinnedSpgemm<V>> pipeline_;
  DeviceCsr<V> c_;  // pattern (and, until the first numeric, the values) of C
  bool first_values_ready_ = false;
};

}  // namespace

std::unique_ptr<SpgemmExecutor> make_binned_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) {
  if (problem.compute == SPARSETC_COMPUTE_64F) return std::make_unique<BinnedSpgemmExecutor<double>>(handle, problem);
  return std::make_unique<BinnedSpgemmExecutor<float>>(handle, problem);
}

}  // namespace sparsetc::detail
