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
#include "engine/spmm_operand.hpp"
#include "engine/spmm_plan.hpp"
#include "engine/spmm_select.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/cuda_check.hpp"
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

// AUTO's rule 1 (engine/spmm_select.hpp): the fill from which the tensor cores beat every other
// path at N columns, fitted with the other rules on timed device paths.
bool predicted_faster(double fill, int64_t n) { return tensor_cores_predicted_faster(fill, n); }

// Above this block fill the identity order is kept without trying 1-SA: little is left to gain.
constexpr double kFillWorthReordering = 0.70;
// 1-SA must remove at least this fraction of the blocks to be used (reorder::choose's threshold).
constexpr double kMinBlockReduction = 0.05;

class BcsrTcSpmm final : public SpmmExecutor {
 public:
  // auto_choice: AUTO is asking; stop before 1-SA (and leave rejected() true) when no order can
  // reach the fill at which the tensor cores are predicted to win.
  BcsrTcSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem, std::string& reason, bool auto_choice)
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
    if (precision_ == TcPrecision::f64) decide_order_and_build<double>(auto_choice);
    else decide_order_and_build<float>(auto_choice);
    preprocess_seconds_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    reason = describe();
  }

  // The arrival counters are the plan's own (counters_), so the workspace holds partial tiles only.
  size_t workspace_size() const override { return tc_spmm_workspace_bytes(operand_, problem_.B.cols, true); }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void* workspace,
               size_t workspace_bytes) override {
    handle_.activate();
    if (version_ != problem_.A->values_version) rebuild();  // same pattern, new values
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
    args.counters = counters_.as<unsigned>();
    args.counter_count = counter_count_;
    tc_spmm(operand_, args, workspace, workspace_bytes, handle_.stream);
  }

  const TcBcsrOperand& operand() const { return operand_; }
  // AUTO's pre-filter turned the matrix down (no operand was finished).
  bool rejected() const { return rejected_; }

 private:
  template <typename V>
  void build_from(const DeviceCsr<V>& csr) {
    const GpuContext context = handle_.gpu();
    if (permutation_.empty()) operand_ = make_tc_bcsr(csr.view(), precision_, context);
    else operand_ = make_tc_bcsr(gpu_permute_rows<V>(csr.view(), permutation_, context).view(), precision_, context);
    keep_counters();
  }

  // The split panels' arrival counters, zeroed once here: each multiply leaves them zero.
  void keep_counters() {
    counter_count_ = tc_spmm_counter_count(operand_, problem_.B.cols);
    if (counter_count_ == 0) {
      counters_ = DeviceBuffer();
      return;
    }
    counters_ = DeviceBuffer(size_t(counter_count_) * sizeof(unsigned), handle_.gpu());
    SPARSETC_CUDA_CHECK(cudaMemsetAsync(counters_.data(), 0, counters_.size(), handle_.stream));
  }

  // New values of A in the planned pattern and order.
  void rebuild() {
    version_ = problem_.A->values_version;
    if (precision_ == TcPrecision::f64) build_from(multiplied_csr<double>(problem_, handle_.gpu()));
    else build_from(multiplied_csr<float>(problem_, handle_.gpu()));
  }

  // Builds in the identity order; unless the blocks already fill well, asks 1-SA (on the host, from
  // the pattern) for an order with fewer blocks and no worse balance, and rebuilds in it. A is
  // normalised once; only its structure travels to the host.
  template <typename V>
  void decide_order_and_build(bool auto_choice) {
    version_ = problem_.A->values_version;
    const DeviceCsr<V> csr = multiplied_csr<V>(problem_, handle_.gpu());
    build_from(csr);
    identity_blocks_ = operand_.blocks;
    const bool predicted = predicted_faster(operand_.fill(), problem_.B.cols);
    const bool reordered_by_caller = !problem_.A->row_permutation.empty();
    const bool may_reorder = !reordered_by_caller && problem_.op == SPARSETC_OP_NON_TRANSPOSE &&
                             operand_.blocks > 0 && operand_.fill() < kFillWorthReordering;
    if (auto_choice && !predicted && !may_reorder) {
      rejected_ = true;
      return;
    }
    if (may_reorder) {
      const HostCsrPattern pattern = csr_pattern_to_host(csr.view(), handle_.stream);
      if (auto_choice && !predicted) {
        // No reordering can do better than this: skip 1-SA when even the bound loses.
        const reorder::Pattern view{pattern.rows, pattern.cols, pattern.row_ptr.data(), pattern.col_idx.data()};
        fill_bound_ = reorder::reachable_fill_bound(view, operand_.shape.width);
        if (!predicted_faster(fill_bound_, problem_.B.cols)) {
          rejected_ = true;
          return;
        }
      }
      const auto start = std::chrono::steady_clock::now();
      permutation_ = one_sa_order(pattern);
      reorder_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!permutation_.empty()) build_from(csr);
    }
    // Row i of the multiplied matrix is original row map[i]: the caller's reordering composed with ours.
    const std::vector<int64_t>& caller = problem_.A->row_permutation;
    const std::vector<int64_t> map =
        permutation_.empty() ? caller : caller.empty() ? permutation_ : reorder::compose(caller, permutation_);
    if (!map.empty() && !reorder::is_identity(map)) {
      row_map_ = DeviceBuffer(map.size() * sizeof(int64_t), handle_.gpu());
      copy_host_to_device(row_map_.data(), map.data(), map.size() * sizeof(int64_t), handle_.stream);
    }
  }

  // 1-SA's order for the kernel's blocks, or empty when it does not pay. The candidates are plain
  // 1-SA and its variant with groups capped at the block height and topped up to it (SMaT's); one
  // qualifies when it removes at least kMinBlockReduction of the blocks and its longest block row
  // is no longer than the identity's. The balance rule is the longest block row, not the spread
  // of block-row lengths (reorder::choose's): the kernel splits long block rows across CTAs, so
  // only a longer critical path costs time, while gathering scrambled blocks back into few dense
  // block rows always widens the spread.
  std::vector<int64_t> one_sa_order(const HostCsrPattern& host) {
    const reorder::Pattern pattern{host.rows, host.cols, host.row_ptr.data(), host.col_idx.data()};
    const int64_t h = operand_.shape.height, w = operand_.shape.width;
    reorder::Options plain;
    plain.block_height = h;
    plain.block_width = w;
    plain.threads = handle_.threads;
    reorder::Options aligned = plain;
    aligned.max_group_height = h;
    aligned.pad_groups = true;
    const reorder::Quality identity = reorder::measure(pattern, nullptr, {}, h, w, handle_.threads);
    std::vector<int64_t> best;
    int64_t best_blocks = int64_t(double(identity.blocks) * (1.0 - kMinBlockReduction));
    for (const reorder::Options& options : {plain, aligned}) {
      reorder::Blocking blocking = reorder::one_sa(pattern, options);
      const reorder::Quality q = reorder::measure(pattern, blocking.permutation.data(), {}, h, w, handle_.threads);
      if (q.blocks < best_blocks && q.blocks_per_block_row_max <= identity.blocks_per_block_row_max) {
        best_blocks = q.blocks;
        best = std::move(blocking.permutation);
      }
    }
    return best;
  }

  std::string describe() const {
    std::string text = str("BCSR tensor cores, ", precision_name(precision_), ", ", operand_.shape.height, "x",
                           operand_.shape.width, " blocks, ", operand_.blocks, " blocks, fill ", operand_.fill());
    if (rejected_ && fill_bound_ > 0)
      text += str(", no row order can fill the blocks beyond ", fill_bound_);
    else if (!permutation_.empty())
      text += str(", 1-SA reordering: ", identity_blocks_, " -> ", operand_.blocks, " blocks");
    else if (reorder_seconds_ > 0)
      text += ", original order kept (1-SA found no order with fewer blocks and no longer block row)";
    const int64_t items = tc_work_list(operand_, problem_.B.cols).work_items;
    if (items > operand_.panels)
      text += str(", ", operand_.panels, " panels of ", operand_.panel_block_rows, " block rows in ", items,
                  " work items");
    return text + str(", preprocessing ", preprocess_seconds_ * 1e3, " ms");
  }

  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  TcPrecision precision_;
  TcBcsrOperand operand_;
  std::vector<int64_t> permutation_;  // ours (empty: identity)
  DeviceBuffer row_map_;              // int64 rows, or empty for the identity
  DeviceBuffer counters_;             // TcSpmmArgs::counters: counter_count_ unsigned, zero between multiplies
  int64_t counter_count_ = 0;
  DeviceBuffer own_workspace_;
  uint64_t version_ = 0;
  int64_t identity_blocks_ = 0;
  bool rejected_ = false;
  double fill_bound_ = 0;  // reachable_fill_bound, when AUTO computed it
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
  auto executor = std::make_unique<BcsrTcSpmm>(handle, problem, reason, only_if_predicted_faster);
  if (only_if_predicted_faster &&
      (executor->rejected() || !predicted_faster(executor->operand().fill(), problem.B.cols))) {
    reason = str("blocks fill too little for the tensor cores (", reason, ")");
    return nullptr;
  }
  return executor;
}

}  // namespace sparsetc::detail
