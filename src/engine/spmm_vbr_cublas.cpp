// The VBR-cuBLAS SpMM executor (see spmm_vbr_cublas.hpp). Plan time: normalise A (transpose for
// op = T), choose Δ_W and τ with a cost model over the candidate 1-SA blockings, permute the rows on
// the device, build the VBR operand and the grouped GEMM plan, create the cuBLAS handle. Execution:
// launches only, on the handle's stream.
#include "engine/spmm_vbr_cublas.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_operand.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/spmm/vbr_cublas/cublas_context.hpp"
#include "reorder/permutation.hpp"
#include "reorder/reorder.hpp"

namespace sparsetc::detail {
namespace {

constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;  // NVIDIA's recommendation for Hopper
constexpr int64_t kIdentityGroupHeight = 64;
constexpr int64_t kWidthCandidates[] = {64, 128};
constexpr double kTauCandidates[] = {0.3, 0.5};

bool precision_of(const SpmmProblem& p, VbrPrecision* out) {
  const sparsetc_value_type_t a = p.A->layout.value_type;
  if (a != p.B.value_type) return false;
  if (p.compute == SPARSETC_COMPUTE_32F && a == SPARSETC_VALUE_F16) *out = VbrPrecision::f16;
  else if (p.compute == SPARSETC_COMPUTE_32F && a == SPARSETC_VALUE_BF16) *out = VbrPrecision::bf16;
  else if (p.compute == SPARSETC_COMPUTE_32F && a == SPARSETC_VALUE_F32) *out = VbrPrecision::f32;
  else if (p.compute == SPARSETC_COMPUTE_TF32 && a == SPARSETC_VALUE_F32) *out = VbrPrecision::tf32;
  else if (p.compute == SPARSETC_COMPUTE_64F && a == SPARSETC_VALUE_F64) *out = VbrPrecision::f64;
  else return false;
  return true;
}

bool c_type_fits(VbrPrecision precision, sparsetc_value_type_t input, sparsetc_value_type_t c) {
  if (precision == VbrPrecision::f64) return c == SPARSETC_VALUE_F64;
  return c == input || c == SPARSETC_VALUE_F32;
}

// The cost model that picks the blocking. Per row group of height h with k blocks, the gathered
// multiply moves k * Δ_W rows of B three times (read, write the panel, read it in the GEMM: 3 e
// bytes per element per column of B) and computes 2 * h * k * Δ_W flops per column, with h rounded
// up to the GEMM's 32-row tile granularity (short groups waste the rest of a tile). The rates are
// H100/H200 figures cuBLAS reaches on such skinny GEMMs (about half the dense peaks) and HBM3 copy
// bandwidth; only their ratio matters for the choice, and it says that blocks cost mostly memory
// (a 64-row f16 block: 0.2 ns of tensor work against 2 ns of traffic per column of B), so fewer,
// taller blocks win over fuller, shorter ones.
double seconds_per_row_element(VbrPrecision p) {
  constexpr double kBandwidth = 3.0e12;
  return 3.0 * vbr_storage_bytes(p) / kBandwidth;
}
double seconds_per_flop(VbrPrecision p) {
  switch (p) {
    case VbrPrecision::f16:
    case VbrPrecision::bf16: return 1.0 / 400e12;
    case VbrPrecision::tf32: return 1.0 / 200e12;
    default: return 1.0 / 40e12;  // fp32 SIMT SGEMM, fp64 DMMA
  }
}

struct Candidate {
  int64_t width = 0;
  double tau = 0;  // 0: identity
  reorder::Blocking blocking;
  int64_t blocks = 0;
  double cost = 0;  // model seconds per column of B
};

// Blocks per group of a blocking (column blocks of `width` touched by the group's rows).
void measure(const reorder::Pattern& a, Candidate& c, VbrPrecision precision) {
  const int64_t col_blocks = (a.cols + c.width - 1) / c.width;
  std::vector<int64_t> seen(size_t(col_blocks), -1);
  c.blocks = 0;
  c.cost = 0;
  for (int64_t g = 0; g < c.blocking.groups(); ++g) {
    int64_t k = 0;
    const int64_t r0 = c.blocking.group_ptr[size_t(g)], r1 = c.blocking.group_ptr[size_t(g + 1)];
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t row = c.blocking.permutation[size_t(r)];
      for (int64_t j = a.row_ptr[row]; j < a.row_ptr[row + 1]; ++j) {
        const int64_t b = a.col_idx[j] / c.width;
        if (seen[size_t(b)] != g) {
          seen[size_t(b)] = g;
          ++k;
        }
      }
    }
    const double tile_rows = double((r1 - r0 + 31) / 32 * 32);
    c.blocks += k;
    c.cost += double(k * c.width) * (seconds_per_row_element(precision) + 2.0 * tile_rows * seconds_per_flop(precision));
  }
}

class VbrCublasSpmm final : public SpmmExecutor {
 public:
  VbrCublasSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem, const VbrCublasOptions& options)
      : handle_(handle), problem_(problem), options_(options) {
    require(problem.A->memory == SPARSETC_MEMORY_DEVICE, SPARSETC_STATUS_NOT_SUPPORTED,
            "VBR-cuBLAS SpMM needs device operands");
    require(precision_of(problem, &precision_), SPARSETC_STATUS_NOT_SUPPORTED,
            "VBR-cuBLAS SpMM runs A and B of one value type: f16 or bf16 with COMPUTE_32F, f32 with COMPUTE_32F or "
            "COMPUTE_TF32, f64 with COMPUTE_64F (got A ", problem.A->layout.value_type, ", B ", problem.B.value_type,
            ", compute type ", problem.compute, ")");
    require(c_type_fits(precision_, problem.B.value_type, problem.C.value_type), SPARSETC_STATUS_NOT_SUPPORTED,
            "VBR-cuBLAS SpMM in ", vbr_precision_name(precision_), " writes C of the input type or f32 (f64 for f64), not ",
            problem.C.value_type);
    require(problem.op == SPARSETC_OP_NON_TRANSPOSE || problem.A->row_permutation.empty(),
            SPARSETC_STATUS_NOT_SUPPORTED,
            "op(A) = A^T of a row-reordered device matrix is not supported (multiply the original matrix)");
    require(options.block_width == 0 || (options.block_width > 0 && options.block_width % 64 == 0),
            SPARSETC_STATUS_INVALID_VALUE, "VBR-cuBLAS SpMM: block width ", options.block_width,
            " (must be a positive multiple of 64)");
    require(options.tau >= 0 && options.tau <= 1, SPARSETC_STATUS_INVALID_VALUE, "VBR-cuBLAS SpMM: tau ",
            options.tau, " (must be in (0, 1])");
    handle.activate();
    const auto start = std::chrono::steady_clock::now();
    cublas_ = std::make_unique<CublasContext>(handle.gpu(), kCublasWorkspaceBytes);
    if (precision_ == VbrPrecision::f64) plan<double>(true);
    else plan<float>(true);
    info_.preprocess_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  size_t workspace_size() const override { return 0; }  // the plan owns its product and panel buffers

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void*,
               size_t) override {
    handle_.activate();
    if (version_ != problem_.A->values_version) {  // same pattern and blocking, new values
      if (precision_ == VbrPrecision::f64) plan<double>(false);
      else plan<float>(false);
    }
    VbrMultiplyArgs args;
    args.B = B.values;
    args.alpha = alpha;
    args.beta = beta;
    args.C = C.values;
    args.ldc = C.ld;
    args.c_type = C.value_type;
    multiply_->run(args, cublas_->on(handle_.stream), handle_.stream);
  }

  const VbrCublasInfo& info() const { return info_; }

  std::string describe() const {
    std::string order = info_.tau > 0 ? str("1-SA order (tau ", info_.tau, ")") : std::string("original order");
    return str("VBR-cuBLAS, ", vbr_precision_name(precision_), ", ", order, ", width ", info_.block_width, ": ",
               info_.groups, " row groups (mean height ", info_.mean_group_height, "), ", info_.blocks,
               " blocks, fill ", info_.stored_area > 0 ? double(info_.nnz) / double(info_.stored_area) : 0.0, "; ",
               multiply_->describe(), "; preprocessing ", info_.preprocess_seconds * 1e3, " ms (1-SA ",
               info_.reorder_seconds * 1e3, " ms)");
  }

 private:
  // choose: decide the blocking (first plan); else keep it (new values).
  template <typename V>
  void plan(bool choose) {
    version_ = problem_.A->values_version;
    const GpuContext context = handle_.gpu();
    const DeviceCsr<V> csr = multiplied_csr<V>(problem_, handle_.gpu());
    if (choose) choose_blocking(csr_pattern_to_host(csr.view(), handle_.stream));
    const bool identity = reorder::is_identity(blocking_.permutation);
    VbrOperand operand =
        identity ? make_vbr_operand(csr.view(), blocking_.group_ptr, width_, precision_, context)
                 : make_vbr_operand(gpu_permute_rows<V>(csr.view(), blocking_.permutation, context).view(),
                                    blocking_.group_ptr, width_, precision_, context);
    // Row i of the multiplied matrix is original row map[i]: the caller's reordering composed with ours.
    const std::vector<int64_t>& caller = problem_.A->row_permutation;
    const std::vector<int64_t> map = caller.empty() ? blocking_.permutation : reorder::compose(caller, blocking_.permutation);
    std::vector<int64_t> row_source(map.size());
    for (size_t i = 0; i < map.size(); ++i) row_source[size_t(map[i])] = int64_t(i);
    multiply_.reset();  // release the old plan's buffers first
    multiply_ = std::make_unique<VbrMultiply>(std::move(operand), row_source, problem_.B.cols, problem_.B.order,
                                              problem_.B.ld, problem_.C.order, options_.multiply, context);
    const VbrOperand& a = multiply_->operand();
    info_.groups = a.groups();
    for (int64_t g = 0; g < a.groups(); ++g)
      info_.nonempty_groups += a.block_ptr[size_t(g + 1)] > a.block_ptr[size_t(g)] ? 1 : 0;
    info_.blocks = a.blocks();
    info_.nnz = a.nnz;
    info_.stored_area = a.stored_area();
    info_.mean_group_height = a.groups() > 0 ? double(a.rows) / double(a.groups()) : 0.0;
    info_.cublas_calls = multiply_->cublas_calls();
    info_.gemms = multiply_->gemms();
    info_.shapes = multiply_->shapes();
  }

  // Every candidate (1-SA for each width and tau, the identity in groups of 64) is measured with the
  // cost model; the cheapest wins (ties: the earlier, i.e. narrower width, lower tau).
  void choose_blocking(const HostCsrPattern& host) {
    const reorder::Pattern pattern{host.rows, host.cols, host.row_ptr.data(), host.col_idx.data()};
    std::vector<int64_t> widths, identity_widths;
    if (options_.block_width) widths = {options_.block_width};
    else widths.assign(std::begin(kWidthCandidates), std::end(kWidthCandidates));
    std::vector<double> taus;
    if (options_.tau > 0) taus = {options_.tau};
    else taus.assign(std::begin(kTauCandidates), std::end(kTauCandidates));
    Candidate best;
    best.cost = -1;
    auto consider = [&](Candidate&& c) {
      measure(pattern, c, precision_);
      if (best.cost < 0 || c.cost < best.cost) best = std::move(c);
    };
    const auto start = std::chrono::steady_clock::now();
    for (int64_t w : widths) {
      if (options_.try_identity) {
        Candidate c;
        c.width = w;
        c.blocking = reorder::identity(pattern.rows, kIdentityGroupHeight);
        consider(std::move(c));
      }
      for (double tau : taus) {
        reorder::Options o;
        o.tau = tau;
        o.block_width = w;
        o.block_height = kIdentityGroupHeight;
        o.threads = handle_.threads;
        Candidate c;
        c.width = w;
        c.tau = tau;
        c.blocking = reorder::one_sa(pattern, o);
        consider(std::move(c));
      }
    }
    info_.reorder_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (best.blocking.group_ptr.empty()) best.blocking.group_ptr = {0};  // no rows
    width_ = best.width;
    info_.block_width = best.width;
    info_.tau = best.tau;
    blocking_ = std::move(best.blocking);
  }

  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  VbrCublasOptions options_;
  VbrPrecision precision_ = VbrPrecision::f32;
  reorder::Blocking blocking_;
  int64_t width_ = 64;
  std::unique_ptr<CublasContext> cublas_;
  std::unique_ptr<VbrMultiply> multiply_;
  uint64_t version_ = 0;
  VbrCublasInfo info_;
};

}  // namespace

bool vbr_cublas_applies(const SpmmProblem& problem) {
  VbrPrecision precision;
  return problem.A->memory == SPARSETC_MEMORY_DEVICE && precision_of(problem, &precision) &&
         c_type_fits(precision, problem.B.value_type, problem.C.value_type) &&
         (problem.op == SPARSETC_OP_NON_TRANSPOSE || problem.A->row_permutation.empty());
}

std::unique_ptr<SpmmExecutor> make_vbr_cublas_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                   std::string& reason, const VbrCublasOptions& options,
                                                   VbrCublasInfo* info) {
  auto executor = std::make_unique<VbrCublasSpmm>(handle, problem, options);
  reason = executor->describe();
  if (info) *info = executor->info();
  return executor;
}

std::unique_ptr<SpmmExecutor> make_vbr_cublas_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                   std::string& reason) {
  return make_vbr_cublas_spmm(handle, problem, reason, VbrCublasOptions{});
}

}  // namespace sparsetc::detail
