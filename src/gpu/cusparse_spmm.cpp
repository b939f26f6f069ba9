// SpMM through cuSPARSE's generic API: the device path of this version, and the baseline every
// sparsetc kernel is measured against.
#include <algorithm>
#include <cstdint>

#include "core/error.hpp"
#include "core/types.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "engine/spmm_select.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/convert/gpu_convert.hpp"
#include "gpu/cusparse_context.hpp"
#include "gpu/cusparse_types.hpp"

namespace sparsetc::detail {
namespace {

cusparseSpMatDescr_t describe_sparse(const RawSparse& a) {
  cusparseSpMatDescr_t d = nullptr;
  void* offsets = const_cast<void*>(a.offsets);
  void* indices = const_cast<void*>(a.indices);
  void* values = const_cast<void*>(a.values);
  switch (a.format) {
    case SPARSETC_FORMAT_CSR:
      SPARSETC_CUSPARSE_CHECK(cusparseCreateCsr(&d, a.rows, a.cols, a.nnz, offsets, indices, values,
                                                cusparse_index(a.offset_type), cusparse_index(a.index_type),
                                                cusparse_base(a.base), cuda_type(a.value_type)));
      break;
    case SPARSETC_FORMAT_CSC:
      SPARSETC_CUSPARSE_CHECK(cusparseCreateCsc(&d, a.rows, a.cols, a.nnz, offsets, indices, values,
                                                cusparse_index(a.offset_type), cusparse_index(a.index_type),
                                                cusparse_base(a.base), cuda_type(a.value_type)));
      break;
    default:
      SPARSETC_CUSPARSE_CHECK(cusparseCreateCoo(&d, a.rows, a.cols, a.nnz, offsets, indices, values,
                                                cusparse_index(a.index_type), cusparse_base(a.base),
                                                cuda_type(a.value_type)));
  }
  return d;
}

cusparseDnMatDescr_t describe_dense(const sparsetc_dense_s& d, void* values) {
  cusparseDnMatDescr_t out = nullptr;
  SPARSETC_CUSPARSE_CHECK(cusparseCreateDnMat(&out, d.rows, d.cols, d.ld, values, cuda_type(d.value_type),
                                              cusparse_order(d.order)));
  return out;
}

// Destroys cuSPARSE descriptors on every path out of a scope.
struct Descriptors {
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnMatDescr_t b = nullptr, c = nullptr;
  ~Descriptors() {
    if (a) cusparseDestroySpMat(a);
    if (b) cusparseDestroyDnMat(b);
    if (c) cusparseDestroyDnMat(c);
  }
};

}  // namespace

std::string cusparse_csr_algorithms_refusal(const SpmmProblem& p) {
  if (p.A->layout.format != SPARSETC_FORMAT_CSR) return "A is not CSR";
  // (cusparseCreateCsr takes 32-bit offsets with 32-bit indices or 64 with 64, nothing mixed)
  if (p.A->layout.offset_type != p.A->layout.index_type) return "A's offsets and indices differ in width";
  if (p.op != SPARSETC_OP_NON_TRANSPOSE) return "op(A) = A^T";
  if (p.B.order != SPARSETC_ORDER_ROW || p.C.order != SPARSETC_ORDER_ROW) return "B or C is column-major";
  if (!p.b_rows_aligned || !p.c_rows_aligned) return "the rows of B or C are not 16-byte aligned";
  return "";
}

bool cusparse_csr_algorithms_take(const sparsetc_dense_s& B, const sparsetc_dense_s& C) {
  return rows_aligned16(B) && rows_aligned16(C);
}

namespace {

// The algorithm: the selector's (engine/spmm_select.hpp: CSR_ALG3 or CSR_ALG2 by N, type and the
// longest row; cuSPARSE's default is 2-10x slower than its best CSR variant on row-major operands)
// where cusparse_csr_algorithms_refusal finds nothing; anything else, and what cuSPARSE refuses,
// runs the default.
cusparseSpMMAlg_t preferred_algorithm(const SpmmProblem& p, CusparseCsrAlgorithm chosen) {
  if (!cusparse_csr_algorithms_refusal(p).empty()) return CUSPARSE_SPMM_ALG_DEFAULT;
  switch (chosen) {
    case CusparseCsrAlgorithm::Alg1: return CUSPARSE_SPMM_CSR_ALG1;
    case CusparseCsrAlgorithm::Alg2: return CUSPARSE_SPMM_CSR_ALG2;
    case CusparseCsrAlgorithm::Alg3: return CUSPARSE_SPMM_CSR_ALG3;
    default: return CUSPARSE_SPMM_ALG_DEFAULT;
  }
}

// Descriptors are made once per plan and only re-pointed at each execution: creating them costs
// microseconds of host time, as much as a small SpMM takes on the device.
class CusparseSpmm final : public SpmmExecutor {
 public:
  CusparseSpmm(sparsetc_handle_s& handle, const SpmmProblem& problem, CusparseCsrAlgorithm chosen)
      : handle_(handle), problem_(problem) {
    compute_ = problem.compute == SPARSETC_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;  // tf32: cuSPARSE runs fp32
    if (problem.A->layout.format == SPARSETC_FORMAT_COO) {
      // cuSPARSE reads a COO as if its entries were in row order (measured: other orders give wrong
      // sums, silently); this library's COO may come in any order.
      handle.activate();
      const int64_t entry = gpu_coo_first_unsorted_row(problem.A->layout, handle.gpu());
      require(entry < 0, SPARSETC_STATUS_NOT_SUPPORTED,
              "cuSPARSE multiplies a COO matrix only with its entries in row order, and entry ", entry,
              " lies in a row above the entry before it (SPARSETC_SPMM_ALG_AUTO and _CSR take any order)");
    }
    // The buffer size depends on shapes and types only; a placeholder pointer stands in for B and C
    // until the first execution.
    placeholder_ = DeviceBuffer(256, handle.gpu());
    d_.a = describe_sparse(problem.A->layout);
    described_values_ = problem.A->layout.values;
    d_.b = describe_dense(problem.B, placeholder_.data());
    d_.c = describe_dense(problem.C, placeholder_.data());
    double one = 1.0;
    float one_f = 1.0f;
    const void* scalar = compute_ == CUDA_R_64F ? static_cast<const void*>(&one) : &one_f;
    cusparseHandle_t h = handle.cusparse_context().on(handle.stream);
    // The default always runs (it also serves calls whose B or C pointer is not 16-byte aligned);
    // the workspace covers both.
    SPARSETC_CUSPARSE_CHECK(cusparseSpMM_bufferSize(h, cusparse_op(problem.op), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                    scalar, d_.a, d_.b, scalar, d_.c, compute_,
                                                    CUSPARSE_SPMM_ALG_DEFAULT, &buffer_bytes_));
    algorithm_ = preferred_algorithm(problem, chosen);
    size_t preferred_bytes = 0;
    if (algorithm_ != CUSPARSE_SPMM_ALG_DEFAULT &&
        cusparseSpMM_bufferSize(h, cusparse_op(problem.op), CUSPARSE_OPERATION_NON_TRANSPOSE, scalar, d_.a, d_.b,
                                scalar, d_.c, compute_, algorithm_, &preferred_bytes) == CUSPARSE_STATUS_SUCCESS)
      buffer_bytes_ = std::max(buffer_bytes_, preferred_bytes);
    else
      algorithm_ = CUSPARSE_SPMM_ALG_DEFAULT;  // refused for these types or shapes
  }

  size_t workspace_size() const override { return buffer_bytes_; }

  void execute(double alpha, const sparsetc_dense_s& B, double beta, const sparsetc_dense_s& C, void* workspace,
               size_t) override {
    handle_.activate();
    if (!workspace && buffer_bytes_) {
      // Kept for the plan's next executions (from the handle's pool or allocator).
      if (!own_workspace_.data()) own_workspace_ = DeviceBuffer(buffer_bytes_, handle_.gpu());
      workspace = own_workspace_.data();
    }
    if (problem_.A->layout.values != described_values_) {  // a borrowed matrix's values moved
      SPARSETC_CUSPARSE_CHECK(cusparseSpMatSetValues(d_.a, const_cast<void*>(problem_.A->layout.values)));
      described_values_ = problem_.A->layout.values;
    }
    SPARSETC_CUSPARSE_CHECK(cusparseDnMatSetValues(d_.b, B.values));
    SPARSETC_CUSPARSE_CHECK(cusparseDnMatSetValues(d_.c, C.values));
    double alpha_d = alpha, beta_d = beta;
    float alpha_f = float(alpha), beta_f = float(beta);
    const bool f64 = compute_ == CUDA_R_64F;
    const void* alpha_p = f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
    const void* beta_p = f64 ? static_cast<const void*>(&beta_d) : &beta_f;
    cusparseHandle_t h = handle_.cusparse_context().on(handle_.stream);
    const cusparseSpMMAlg_t algorithm =
        cusparse_csr_algorithms_take(B, C) ? algorithm_ : CUSPARSE_SPMM_ALG_DEFAULT;
    if (algorithm == CUSPARSE_SPMM_CSR_ALG3) {
      // CSR_ALG3 analyses A's pattern in SpMM_preprocess and keeps the result in the buffer; without
      // it every call redoes that work (measured 1.3-2.5x slower at N = 128). The pattern is the
      // plan's, so it is done once, into a buffer of the plan's own that no caller workspace replaces.
      if (!preprocessed_) {
        preprocessed_state_ = DeviceBuffer(std::max<size_t>(buffer_bytes_, 16), handle_.gpu());
        SPARSETC_CUSPARSE_CHECK(cusparseSpMM_preprocess(h, cusparse_op(problem_.op), CUSPARSE_OPERATION_NON_TRANSPOSE,
                                                        alpha_p, d_.a, d_.b, beta_p, d_.c, compute_, algorithm,
                                                        preprocessed_state_.data()));
        preprocessed_ = true;
      }
      workspace = preprocessed_state_.data();
    }
    SPARSETC_CUSPARSE_CHECK(cusparseSpMM(h, cusparse_op(problem_.op), CUSPARSE_OPERATION_NON_TRANSPOSE, alpha_p, d_.a,
                                         d_.b, beta_p, d_.c, compute_, algorithm, workspace));
  }

 private:
  sparsetc_handle_s& handle_;
  SpmmProblem problem_;
  cudaDataType compute_;
  cusparseSpMMAlg_t algorithm_ = CUSPARSE_SPMM_ALG_DEFAULT;
  DeviceBuffer placeholder_, own_workspace_;
  DeviceBuffer preprocessed_state_;  // CSR_ALG3's analysis of A's pattern (SpMM_preprocess)
  bool preprocessed_ = false;
  Descriptors d_;
  const void* described_values_ = nullptr;
  size_t buffer_bytes_ = 0;
};

}  // namespace

std::unique_ptr<SpmmExecutor> make_cusparse_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem,
                                                CusparseCsrAlgorithm algorithm) {
  return std::make_unique<CusparseSpmm>(handle, problem, algorithm);
}

std::unique_ptr<SpmmExecutor> make_cusparse_spmm(sparsetc_handle_s& handle, const SpmmProblem& problem) {
  SpmmFeatures shape;  // no row statistics: the algorithm by N and type alone
  shape.n = problem.B.cols;
  shape.value_type = problem.B.value_type;
  shape.order = problem.B.order;
  return make_cusparse_spmm(handle, problem, select_cusparse_algorithm(shape));
}

}  // namespace sparsetc::detail
