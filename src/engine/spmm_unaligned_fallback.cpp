// AUTO's cuSPARSE plans on operands that move: cuSPARSE's CSR_ALG2/ALG3 need B and C to start on
// 16-byte boundaries, and a call whose pointers do not (a column slice of a row-major B, say)
// would run cuSPARSE's default algorithm instead, 2-10x slower and, for a C in f16/bf16, summing
// in C's own precision. AUTO promises fp32 sums, so such calls go to this library's CSR kernel,
// which takes any alignment.
#include <memory>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "engine/handle.hpp"
#include "engine/spmm_plan.hpp"

namespace sparsetc::detail {
namespace {

class UnalignedFallback final : public SpmmExecutor {
 public:
  UnalignedFallback(sparsetc_handle_s& handle, const SpmmProblem& problem, std::unique_ptr<SpmmExecutor> cusparse)
      : handle_(handle), problem_(problem), cusparse_(std::move(cusparse)) {}

  size_t workspace_size() const override { return cusparse_->workspace_size(); }
  std::string note() const override { return cusparse_->note(); }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void* workspace,
               size_t workspace_bytes) override {
    if (!cusparse_csr_algorithms_take(B, C) && !kernel_ && !kernel_refused_) {
      // Built at the first such call: most plans never see one.
      try {
        // Planned for this call's B and C, so that the kernel's copies to aligned rows apply
        // where they pay (the plan saw aligned ones).
        SpmmProblem shifted = problem_;
        shifted.b_rows_aligned = rows_aligned16(B);
        shifted.c_rows_aligned = rows_aligned16(C);
        kernel_ = make_cuda_core_spmm(handle_, shifted, SPARSETC_SPMM_ALG_CSR);
        SPARSETC_LOG(debug, "SpMM plan: B or C not 16-byte aligned: the CSR kernel, not cuSPARSE's default (",
                     kernel_->note(), ")");
      } catch (const Error& e) {
        if (e.status() != SPARSETC_STATUS_NOT_SUPPORTED) throw;
        kernel_refused_ = true;  // cuSPARSE's default, then
      }
    }
    if (!kernel_ || cusparse_csr_algorithms_take(B, C)) {
      cusparse_->execute(alpha, B, beta, C, workspace, workspace_bytes);
      return;
    }
    // The caller's workspace was sized for cuSPARSE; the kernel takes its own where that is short.
    const bool fits = workspace && workspace_bytes >= kernel_->workspace_size();
    kernel_->execute(alpha, B, beta, C, fits ? workspace : nullptr, fits ? workspace_bytes : 0);
  }

 private:
  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  std::unique_ptr<SpmmExecutor> cusparse_, kernel_;
  bool kernel_refused_ = false;
};

}  // namespace

std::unique_ptr<SpmmExecutor> with_unaligned_fallback(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                      std::unique_ptr<SpmmExecutor> cusparse) {
  return std::make_unique<UnalignedFallback>(handle, problem, std::move(cusparse));
}

}  // namespace sparsetc::detail
