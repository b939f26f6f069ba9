// SpGEMM through the tSparse tile pipeline on the GPU (gpu/spgemm/tsparse/): the executor of
// SPARSETC_SPGEMM_ALG_TSPARSE_TC.
//
// Plan: create = operands to canonical device CSR of op(A), op(B), then to 8x8 bitmap tiles in the
// storage of the resolved precision (fp16/bf16 range checked), product and culled-pair counts;
// symbolic = task list, counting kernel, C's structure (kept), and the product with cancelled
// zeros removed (kept for the first numeric); numeric = C from it, or, after new operand values,
// the multiplication kernel again on the kept task list (no sort, no count).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "cpu/cpu_kernels.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_output.hpp"
#include "engine/spgemm_plan.hpp"
#include "gpu/analysis/gpu_analysis.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/spgemm/binned/binned_spgemm.hpp"
#include "gpu/spgemm/tsparse/tsparse_spgemm.hpp"

namespace sparsetc::detail {
namespace {

TileArithmetic arithmetic_of(sparsetc_tc_precision_t precision) {
  switch (precision) {
    case SPARSETC_TC_PRECISION_BF16: return TileArithmetic::kBf16;
    case SPARSETC_TC_PRECISION_F64: return TileArithmetic::kF64;
    case SPARSETC_TC_PRECISION_CUDA_CORES: return TileArithmetic::kCudaCores;
    case SPARSETC_TC_PRECISION_F16_SPLIT: return TileArithmetic::kF16Split;
    case SPARSETC_TC_PRECISION_BF16_SPLIT: return TileArithmetic::kBf16Split;
    default: return TileArithmetic::kF16;
  }
}

template <typename V>
class TsparseSpgemmExecutor final : public SpgemmExecutor {
 public:
  TsparseSpgemmExecutor(sparsetc_handle_s& handle, const SpgemmProblem& problem)
      : handle_(handle), problem_(problem), arithmetic_(arithmetic_of(problem.tc_precision)) {
    require(problem.A->memory == SPARSETC_MEMORY_DEVICE && problem.B->memory == SPARSETC_MEMORY_DEVICE,
            SPARSETC_STATUS_NOT_SUPPORTED, "the tSparse SpGEMM needs operands in device memory");
    handle_.activate();
    load_operands(true);
    pipeline_ = std::make_unique<TsparseSpgemm<V>>(a_, b(), TsparseSpgemmOptions{}, handle_.gpu());
  }

  int64_t products() const override { return products_; }
  size_t memory_estimate() const override {
    const auto tile_bytes = [&](const TileOperand& t) {
      return size_t(t.tiles) * (4 + 8 + 2 + 8) + size_t(t.nnz) * size_t(tile_value_bytes(t.arithmetic));
    };
    return pipeline_->memory_estimate() + tile_bytes(a_) + (b_is_a() ? 0 : tile_bytes(b_));
  }

  int64_t symbolic() override {
    handle_.activate();
    if (versions_ != current_versions()) reload();
    if (!pipeline_->has_structure()) pipeline_->symbolic();
    c_ = pipeline_->multiply(problem_.drop_tolerance);
    first_values_ready_ = true;
    return c_.nnz;
  }

  void numeric(sparsetc_matrix_s** C) override {
    handle_.activate();
    require(*C == nullptr, SPARSETC_STATUS_INVALID_VALUE,
            "the tSparse SpGEMM removes entries that cancel to zero, so the pattern of C depends on the values: "
            "pass *C == NULL for a new matrix");
    const bool changed = versions_ != current_versions();
    if (changed) reload();
    if (!first_values_ready_ || changed) c_ = pipeline_->multiply(problem_.drop_tolerance);
    first_values_ready_ = false;
    *C = make_output(std::move(c_)).release();
    c_ = DeviceCsr<V>();
  }

 private:
  static sparsetc_value_type_t value_type() {
    return std::is_same_v<V, double> ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  }
  std::pair<uint64_t, uint64_t> current_versions() const {
    return {problem_.A->values_version, problem_.B->values_version};
  }
  bool b_is_a() const { return problem_.B == problem_.A && problem_.op_b == problem_.op_a; }
  const TileOperand& b() const { return b_is_a() ? a_ : b_; }

  // op(A), op(B) as canonical CSR in V, then as tiles (the CSR is released).
  void load_operands(bool count) {
    const GpuContext context = handle_.gpu();
    const DeviceCsr<V> a = binned::prepare_operand<V>(problem_.A->layout, problem_.A->duplicates,
                                                      problem_.op_a == SPARSETC_OP_TRANSPOSE, context);
    DeviceCsr<V> b;
    if (!b_is_a())
      b = binned::prepare_operand<V>(problem_.B->layout, problem_.B->duplicates,
                                     problem_.op_b == SPARSETC_OP_TRANSPOSE, context);
    if (count) products_ = count_products(a.view(), b_is_a() ? a.view() : b.view(), context);
    a_ = make_tile_operand(a.view(), arithmetic_, "A", context);
    if (!b_is_a()) b_ = make_tile_operand(b.view(), arithmetic_, "B", context);
    versions_ = current_versions();
  }

  // New values with the same patterns (the plan's contract): the tiles again, same shapes, so the
  // kept task list still holds.
  void reload() {
    const int64_t a_tiles = a_.tiles, a_nnz = a_.nnz, b_tiles = b().tiles, b_nnz = b().nnz;
    load_operands(false);
    require(a_.tiles == a_tiles && a_.nnz == a_nnz && b().tiles == b_tiles && b().nnz == b_nnz,
            SPARSETC_STATUS_INVALID_VALUE, "the operands' patterns changed since the plan was made (make a new plan)");
  }

  std::unique_ptr<sparsetc_matrix_s> make_output(DeviceCsr<V> c) const {
    return make_device_csr_output(handle_, c.rows, c.cols, c.nnz, c.row_ptr.template as<const int64_t>(),
                                  c.col_idx.template as<const int32_t>(), std::move(c.values), problem_.A->layout.base,
                                  value_type());
  }

  sparsetc_handle_s& handle_;
  SpgemmProblem problem_;
  TileArithmetic arithmetic_;
  TileOperand a_, b_;
  std::pair<uint64_t, uint64_t> versions_;
  int64_t products_ = 0;
  std::unique_ptr<TsparseSpgemm<V>> pipeline_;
  DeviceCsr<V> c_;  // the product of symbolic(), until the first numeric
  bool first_values_ready_ = false;
};

}  // namespace

bool tsparse_auto_prefers(sparsetc_handle_s& handle, const SpgemmProblem& problem, std::string* why) {
  handle.activate();
  const GpuContext context = handle.gpu();
  // The tile density of op(A) (and of op(B) when it differs), from the one-pass GPU analysis.
  auto measure = [&](sparsetc_matrix_s* m, sparsetc_operation_t op, double& nnz, double& rows, double& per_tile) {
    const DeviceCsr<float> csr =
        binned::prepare_operand<float>(m->layout, m->duplicates, op == SPARSETC_OP_TRANSPOSE, context);
    const AnalysisSums sums = gpu_analysis_sums(csr.rows, csr.cols, csr.nnz, csr.row_ptr.as<const int64_t>(),
                                                csr.col_idx.as<const int32_t>(), nullptr, 0, context);
    int64_t tiles = 0;
    for (int c = 1; c <= 64; ++c) tiles += sums.tile_histogram[c];
    nnz = double(csr.nnz);
    rows = double(csr.rows);
    per_tile = tiles > 0 ? nnz / double(tiles) : 0.0;
  };
  double nnz_a = 0, rows_a = 0, tile_a = 0, nnz_b = 0, rows_b = 0, tile_b = 0;
  measure(problem.A, problem.op_a, nnz_a, rows_a, tile_a);
  if (problem.B == problem.A && problem.op_b == problem.op_a) tile_b = tile_a;
  else measure(problem.B, problem.op_b, nnz_b, rows_b, tile_b);
  const double row_a = rows_a > 0 ? nnz_a / rows_a : 0.0;
  const bool prefers = nnz_a >= kTsparseAutoMinNnz && row_a >= kTsparseAutoMinRow &&
                       std::min(tile_a, tile_b) >= kTsparseAutoMinPerTile;
  if (why)
    *why = str("nnz(A) ", int64_t(nnz_a), ", ", row_a, " entries per row, ", std::min(tile_a, tile_b),
               " per 8x8 tile");
  return prefers;
}

std::unique_ptr<SpgemmExecutor> make_tsparse_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) {
  if (problem.tc_precision == SPARSETC_TC_PRECISION_F64)
    return std::make_unique<TsparseSpgemmExecutor<double>>(handle, problem);
  return std::make_unique<TsparseSpgemmExecutor<float>>(handle, problem);
}

std::unique_ptr<SpgemmExecutor> make_tsparse_spgemm_if_it_fits(sparsetc_handle_s& handle,
                                                               const SpgemmProblem& problem, std::string* why) {
  std::unique_ptr<SpgemmExecutor> executor = make_tsparse_spgemm(handle, problem);
  size_t free_bytes = 0, total_bytes = 0;
  SPARSETC_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (executor->memory_estimate() <= free_bytes / 2) return executor;
  if (why)
    *why = str("its task list needs about ", executor->memory_estimate() >> 20, " MiB of ", free_bytes >> 20,
               " MiB free");
  return nullptr;
}

}  // namespace sparsetc::detail
