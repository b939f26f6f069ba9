// The tensor-core BCSR SpMM behind SPARSETC_SPMM_ALG_BCSR_TC: at plan time A is normalised on the
// device, transposed for op = T, reordered with 1-SA when that predicts fewer blocks without a
// worse balance, and converted to BCSR in the MMA's block shape; every execution is one call of
// the kernels in gpu/spmm/bcsr_tc, answering in A's original row order.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spmm/bcsr_tc/bcsr_tc_spmm.hpp"
#include "reorder/permutation.hpp"
#include "reorder/reorder.hpp"

namespace sparsetc::detail {
namespace {

const char* precision_name(TcPrecision p) {
  switch (p) {
    case TcPrecision::f16: return "f16";
    case TcPrecision::bf16: return "bf16";
    case TcPrecision::tf32: return "tf32";
    default: return "f64";
  }
}

// The tensor-core precision an SpMM problem asks for: the inputs' storage type, with the compute
// type saying whether fp32 inputs may be rounded to tf32. A and B must agree: rounding a wider A
// to B's half type would silently lose the precision the caller stored.
TcPrecision tc_precision_of(const SpmmProblem& p) {
  const sparsetc_value_type_t a = p.A->layout.value_type, b = p.B.value_type;
  require(a == b, SPARSETC_STATUS_NOT_SUPPORTED, "BCSR tensor-core SpMM needs A and B of one value type (A is ",
          a, ", B is ", b, ")");
  if (p.compute == SPARSETC_COMPUTE_32F && a == SPARSETC_VALUE_F16) return TcPrecision::f16;
  if (p.compute == SPARSETC_COMPUTE_32F && a == SPARSETC_VALUE_BF16) return TcPrecision::bf16;
  if (p.compute == SPARSETC_COMPUTE_TF32 && a == SPARSETC_VALUE_F32) return TcPrecision::tf32;
  if (p.compute == SPARSETC_COMPUTE_64F && a == SPARSETC_VALUE_F64) return TcPrecision::f64;
  fail(SPARSETC_STATUS_NOT_SUPPORTED,
       "BCSR tensor-core SpMM runs f16 or bf16 inputs with COMPUTE_32F, f32 inputs with COMPUTE_TF32, or f64 "
       "inputs with COMPUTE_64F (got value type ", a, ", compute type ", p.compute, ")");
}

// Whether the problem's types name a tensor-core precision (no throw).
bool names_tc_precision(const SpmmProblem& p) {
  const sparsetc_value_type_t a = p.A->layout.value_type;
  if (a != p.B.value_type) return false;
  return (p.compute == SPARSETC_COMPUTE_32F && (a == SPARSETC_VALUE_F16 || a == SPARSETC_VALUE_BF16)) ||
         (p.compute == SPARSETC_COMPUTE_TF32 && a == SPARSETC_VALUE_F32) ||
         (p.compute == SPARSETC_COMPUTE_64F && a == SPARSETC_VALUE_F64);
}

// AUTO's model: the tensor cores move padded blocks (bytes ~ 1 / fill per stored entry) but
// read each B slab once per block instead of once per entry; they win once blocks fill past a
// threshold that falls with N (more columns amortise the padding). Fitted on the structured and
// real suites of docs/performance.md (H200).
bool predicted_faster(double fill, int64_t n) {
  const double threshold = n <= 8 ? 0.30 : n <= 32 ? 0.20 : 0.12;
  return fill >= threshold;
}

// Above this block fill the identity order is kept without trying 1-SA: little is left to gain.
constexpr double kFillWorthReordering = 0.70;
// 1-SA must remove at least this fraction of the blocks to be used (reorder::choose's rule).
constexpr double kMinBlockReduction = 0.05;

class BcsrTcSpmm final : public SpmmExecutor {
 public:
  BcsrTcSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem, std::string& reason)
      : handle_(handle), problem_(problem), precision_(tc_precision_of(problem)) {
    require(problem.A->memory == SPARSETC_MEMORY_DEVICE, SPARSETC_STATUS_NOT_SUPPORTED,
            "BCSR tensor-core SpMM needs device operands");
    require(tc_supports(precision_, problem.B.value_type, problem.C.value_type), SPARSETC_STATUS_NOT_SUPPORTED,
            "BCSR tensor-core SpMM in ", precision_name(precision_), " does not write C of value type ",
            problem.C.value_type);
    require(problem.op == SPARSETC_OP_NON_TRANSPOSE || problem.A->row_permutation.empty(),
            SPARSETC_STATUS_NOT_SUPPORTED,
            "op(A) = A^T of a row-reordered device matrix is not supported (multiply the original matrix)");
    handle.activate();
    const auto start = std::chrono::steady_clock::now();
    decide_order_and_build();
    preprocess_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reason = describe();
  }

  size_t workspace_size() const override { return tc_spmm_workspace_bytes(operand_, problem_.B.cols); }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void* workspace,
               size_t workspace_bytes) override {
    handle_.activate();
    if (version_ != problem_.A->values_version) build(permutation_);  // same pattern, new values
    const size_t needed = workspace_size();
    if (!workspace && needed) {
      if (own_workspace_.size() < needed) own_workspace_ = DeviceBuffer(needed, handle_.gpu());
      workspace = own_workspace_.data();
      workspace_bytes = own_workspace_.size();
    }
    TcSpmmArgs args;
    args.n = B.cols;
    args.B = B.values;
    args.b_type = B.value_type;
    args.b_order = B.order;
    args.ldb = B.ld;
    args.C = C.values;
    args.c_type = C.value_type;
    args.c_order = C.order;
    args.ldc = C.ld;
    args.alpha = alpha;
    args.beta = beta;
    args.row_map = row_map_.as<const int64_t>();
    tc_spmm(operand_, args, workspace, workspace_bytes, handle_.stream);
  }

  const TcBcsrOperand& operand() const { return operand_; }

 private:
  // The canonical CSR of op(A) in the storage the precision converts from.
  template <typename V>
  DeviceCsr<V> multiplied_csr() {
    const GpuContext context = handle_.gpu();
    DeviceCsr<V> csr = gpu_normalize<V>(problem_.A->layout, problem_.A->duplicates, context);
    if (problem_.op == SPARSETC_OP_NON_TRANSPOSE) return csr;
    DeviceCsc<V> csc = gpu_csr_to_csc<V>(csr.view(), context);
    DeviceCsr<V> t;  // the CSC of A is the CSR of A^T
    t.rows = csc.cols;
    t.cols = csc.rows;
    t.nnz = csc.nnz;
    t.row_ptr = std::move(csc.col_ptr);
    t.col_idx = std::move(csc.row_idx);
    t.values = std::move(csc.values);
    return t;
  }

  template <typename V>
  void build_from(const std::vector<int64_t>& permutation) {
    const GpuContext context = handle_.gpu();
    DeviceCsr<V> csr = multiplied_csr<V>();
    if (!permutation.empty()) csr = gpu_permute_rows<V>(csr.view(), permutation, context);
    operand_ = make_tc_bcsr(csr.view(), precision_, context);
  }

  void build(const std::vector<int64_t>& permutation) {
    version_ = problem_.A->values_version;
    if (precision_ == TcPrecision::f64) build_from<double>(permutation);
    else build_from<float>(permutation);
  }

  // Builds in the identity order; unless the blocks already fill well, asks 1-SA (on the host, from
  // the pattern) for an order with fewer blocks and no worse balance, and rebuilds in it.
  void decide_order_and_build() {
    build({});
    identity_blocks_ = operand_.blocks;
    const bool reordered_by_caller = !problem_.A->row_permutation.empty();
    if (!reordered_by_caller && problem_.op == SPARSETC_OP_NON_TRANSPOSE && operand_.blocks > 0 &&
        operand_.fill() < kFillWorthReordering) {
      const auto start = std::chrono::steady_clock::now();
      const DeviceCsr<float> csr = gpu_normalize<float>(problem_.A->layout, problem_.A->duplicates, handle_.gpu());
      const CsrMatrix<float> host = csr_to_host(csr.view(), handle_.stream);
      const reorder::Pattern pattern{host.rows, host.cols, host.row_ptr.data(), host.col_idx.data()};
      reorder::Options options;
      options.block_height = operand_.shape.height;
      options.block_width = operand_.shape.width;
      options.threads = handle_.threads;
      reorder::AutoChoice choice = reorder::choose(pattern, options, kMinBlockReduction);
      reorder_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (choice.method != reorder::Method::identity) {
        permutation_ = std::move(choice.blocking.permutation);
        build(permutation_);
      }
    }
    // Row i of the multiplied matrix is original row map[i]: the caller's reordering composed with ours.
    const std::vector<int64_t> map = reorder::compose(problem_.A->row_permutation, permutation_);
    if (!map.empty() && !reorder::is_identity(map)) {
      row_map_ = DeviceBuffer(map.size() * sizeof(int64_t), handle_.gpu());
      copy_host_to_device(row_map_.data(), map.data(), map.size() * sizeof(int64_t), handle_.stream);
    }
  }

  std::string describe() const {
    std::string text = str("BCSR tensor cores, ", precision_name(precision_), ", ", operand_.shape.height, "x",
                           operand_.shape.width, " blocks, ", operand_.blocks, " blocks, fill ", operand_.fill());
    if (!permutation_.empty())
      text += str(", 1-SA reordering: ", identity_blocks_, " -> ", operand_.blocks, " blocks");
    else if (reorder_seconds_ > 0)
      text += ", 1-SA kept the original order (no fewer blocks without a worse balance)";
    return text + str(", preprocessing ", preprocess_seconds_ * 1e3, " ms");
  }

  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  TcPrecision precision_;
  TcBcsrOperand operand_;
  std::vector<int64_t> permutation_;  // ours (empty: identity)
  DeviceBuffer row_map_;              // int64 rows, or empty for the identity
  DeviceBuffer own_workspace_;
  uint64_t version_ = 0;
  int64_t identity_blocks_ = 0;
  double preprocess_seconds_ = 0, reorder_seconds_ = 0;
};

}  // namespace

bool bcsr_tc_applies(const SpmmProblem& problem) {
  return problem.A->memory == SPARSETC_MEMORY_DEVICE && names_tc_precision(problem) &&
         tc_supports(tc_precision_of(problem), problem.B.value_type, problem.C.value_type) &&
         (problem.op == SPARSETC_OP_NON_TRANSPOSE || problem.A->row_permutation.empty());
}

std::unique_ptr<SpmmExecutor> make_bcsr_tc_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                std::string& reason, bool only_if_predicted_faster) {
  auto executor = std::make_unique<BcsrTcSpmm>(handle, problem, reason);
  if (only_if_predicted_faster && !predicted_faster(executor->operand().fill(), problem.B.cols)) {
    reason = str("blocks fill too little for the tensor cores (", reason, ")");
    return nullptr;
  }
  return executor;
}

}  // namespace sparsetc::detail
