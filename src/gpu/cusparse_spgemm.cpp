// SpGEMM through cuSPARSE's generic API (workEstimation -> compute -> copy): the device path of
// this version and the baseline for the binned and tensor-core SpGEMMs.
#include "core/error.hpp"
#include "core/logging.hpp"
#include "engine/handle.hpp"
#include "engine/matrix.hpp"
#include "engine/spgemm_plan.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/cusparse_context.hpp"
#include "gpu/cusparse_types.hpp"

namespace sparsetc::detail {
namespace {

// cuSPARSE's SpGEMM takes CSR with 32-bit offsets and indices and one value type throughout.
void check_supported(const SpgemmProblem& p) {
  require(p.op_a == SPARSETC_OP_NON_TRANSPOSE && p.op_b == SPARSETC_OP_NON_TRANSPOSE, SPARSETC_STATUS_NOT_SUPPORTED,
          "cuSPARSE SpGEMM supports only non-transposed operands");
  const sparsetc_value_type_t want = p.compute == SPARSETC_COMPUTE_64F ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  for (const sparsetc_matrix_s* m : {p.A, p.B}) {
    const RawSparse& r = m->layout;
    const char* name = m == p.A ? "A" : "B";
    require(r.format == SPARSETC_FORMAT_CSR, SPARSETC_STATUS_NOT_SUPPORTED, "cuSPARSE SpGEMM needs CSR; ", name,
            " is not (convert it with sparsetc_matrix_convert)");
    require(r.offset_type == SPARSETC_INDEX_32 && r.index_type == SPARSETC_INDEX_32, SPARSETC_STATUS_NOT_SUPPORTED,
            "cuSPARSE SpGEMM needs 32-bit offsets and indices; ", name, " has others");
    require(r.value_type == want, SPARSETC_STATUS_NOT_SUPPORTED, "cuSPARSE SpGEMM needs ", name,
            " values of the compute type (", want == SPARSETC_VALUE_F64 ? "f64" : "f32", ")");
  }
  require(p.A->layout.base == p.B->layout.base, SPARSETC_STATUS_NOT_SUPPORTED,
          "cuSPARSE SpGEMM needs A and B in the same index base");
}

cusparseSpMatDescr_t describe_csr(const RawSparse& r) {
  cusparseSpMatDescr_t d = nullptr;
  SPARSETC_CUSPARSE_CHECK(cusparseCreateCsr(&d, r.rows, r.cols, r.nnz, const_cast<void*>(r.offsets),
                                            const_cast<void*>(r.indices), const_cast<void*>(r.values),
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, cusparse_base(r.base),
                                            cuda_type(r.value_type)));
  return d;
}

class CusparseSpgemm final : public SpgemmExecutor {
 public:
  CusparseSpgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) : handle_(handle), problem_(problem) {
    check_supported(problem);
    require(problem.drop_tolerance < 0, SPARSETC_STATUS_NOT_SUPPORTED, "cuSPARSE SpGEMM has no drop tolerance");
    value_type_ = problem.compute == SPARSETC_COMPUTE_64F ? SPARSETC_VALUE_F64 : SPARSETC_VALUE_F32;
  }
  ~CusparseSpgemm() override { release(); }

  int64_t products() const override { return -1; }  // cuSPARSE does not report it for ALG_DEFAULT
  size_t memory_estimate() const override { return buffer1_.size() + buffer2_.size(); }

  int64_t symbolic() override {
    run_until_copy();
    return nnz_;
  }

  void numeric(sparsetc_matrix_s** C) override {
    // cuSPARSE's non-reuse pipeline is single-use: a second numeric call runs it again.
    if (!ready_for_copy_) run_until_copy();
    const RawSparse& a = problem_.A->layout;
    const RawSparse& b = problem_.B->layout;
    if (!*C) {
      auto out = std::make_unique<sparsetc_matrix_s>();
      out->layout = RawSparse{SPARSETC_FORMAT_CSR, a.rows, b.cols, nnz_, nullptr, nullptr, nullptr,
                              SPARSETC_INDEX_32, SPARSETC_INDEX_32, a.base, value_type_};
      out->memory = SPARSETC_MEMORY_DEVICE;
      out->device = handle_.device;
      out->device_offsets = DeviceBuffer(size_t(a.rows + 1) * sizeof(int32_t), handle_.gpu());
      out->device_indices = DeviceBuffer(size_t(nnz_) * sizeof(int32_t), handle_.gpu());
      out->device_values = DeviceBuffer(size_t(nnz_) * (value_type_ == SPARSETC_VALUE_F64 ? 8 : 4), handle_.gpu());
      out->layout.offsets = out->device_offsets.data();
      out->layout.indices = out->device_indices.data();
      out->layout.values = out->device_values.data();
      copy_into(*out);
      *C = out.release();
      return;
    }
    sparsetc_matrix_s& out = **C;
    require(out.memory == SPARSETC_MEMORY_DEVICE && out.layout.rows == a.rows && out.layout.cols == b.cols &&
                out.layout.nnz == nnz_ && out.layout.value_type == value_type_ &&
                out.layout.offset_type == SPARSETC_INDEX_32 && out.ownership == SPARSETC_COPY,
            SPARSETC_STATUS_INVALID_VALUE, "*C was not made by this plan (shape, nnz, type or memory differ)");
    copy_into(out);
    mark_values_changed(out);
  }

 private:
  void run_until_copy() {
    release();
    handle_.activate();
    cusparseHandle_t h = handle_.cusparse_context().on(handle_.stream);
    a_ = describe_csr(problem_.A->layout);
    b_ = describe_csr(problem_.B->layout);
    SPARSETC_CUSPARSE_CHECK(cusparseCreateCsr(&c_, problem_.A->layout.rows, problem_.B->layout.cols, 0, nullptr,
                                              nullptr, nullptr, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                              cusparse_base(problem_.A->layout.base), cuda_type(value_type_)));
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_createDescr(&descr_));
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const auto type = cuda_type(value_type_);
    size_t bytes1 = 0, bytes2 = 0;
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(h, op, op, one(), a_, b_, zero(), c_, type,
                                                          CUSPARSE_SPGEMM_DEFAULT, descr_, &bytes1, nullptr));
    buffer1_ = DeviceBuffer(bytes1, handle_.gpu());
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_workEstimation(h, op, op, one(), a_, b_, zero(), c_, type,
                                                          CUSPARSE_SPGEMM_DEFAULT, descr_, &bytes1, buffer1_.data()));
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_compute(h, op, op, one(), a_, b_, zero(), c_, type, CUSPARSE_SPGEMM_DEFAULT,
                                                   descr_, &bytes2, nullptr));
    buffer2_ = DeviceBuffer(bytes2, handle_.gpu());
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_compute(h, op, op, one(), a_, b_, zero(), c_, type, CUSPARSE_SPGEMM_DEFAULT,
                                                   descr_, &bytes2, buffer2_.data()));
    int64_t rows = 0, cols = 0;
    SPARSETC_CUSPARSE_CHECK(cusparseSpMatGetSize(c_, &rows, &cols, &nnz_));
    ready_for_copy_ = true;
    SPARSETC_LOG(debug, "cuSPARSE SpGEMM: nnz(C) = ", nnz_, ", buffers ", bytes1, " + ", bytes2, " bytes");
  }

  void copy_into(sparsetc_matrix_s& out) {
    cusparseHandle_t h = handle_.cusparse_context().on(handle_.stream);
    SPARSETC_CUSPARSE_CHECK(cusparseCsrSetPointers(c_, const_cast<void*>(out.layout.offsets),
                                                   const_cast<void*>(out.layout.indices),
                                                   const_cast<void*>(out.layout.values)));
    const auto op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    SPARSETC_CUSPARSE_CHECK(cusparseSpGEMM_copy(h, op, op, one(), a_, b_, zero(), c_,
                                                cuda_type(value_type_), CUSPARSE_SPGEMM_DEFAULT, descr_));
    ready_for_copy_ = false;
    release();  // the buffers are needed only until the copy
  }

  // cuSPARSE reads alpha and beta in the compute type, from host memory.
  const void* one() const { return value_type_ == SPARSETC_VALUE_F64 ? static_cast<const void*>(&one_d_) : &one_f_; }
  const void* zero() const {
    return value_type_ == SPARSETC_VALUE_F64 ? static_cast<const void*>(&zero_d_) : &zero_f_;
  }

  void release() {
    if (descr_) cusparseSpGEMM_destroyDescr(descr_);
    if (a_) cusparseDestroySpMat(a_);
    if (b_) cusparseDestroySpMat(b_);
    if (c_) cusparseDestroySpMat(c_);
    descr_ = nullptr;
    a_ = b_ = c_ = nullptr;
    buffer1_ = DeviceBuffer();
    buffer2_ = DeviceBuffer();
  }

  sparsetc_handle_s& handle_;
  SpgemmProblem problem_;
  sparsetc_value_type_t value_type_ = SPARSETC_VALUE_F32;
  cusparseSpMatDescr_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cusparseSpGEMMDescr_t descr_ = nullptr;
  DeviceBuffer buffer1_, buffer2_;
  int64_t nnz_ = 0;
  bool ready_for_copy_ = false;
  const double one_d_ = 1, zero_d_ = 0;
  const float one_f_ = 1, zero_f_ = 0;
};

}  // namespace

std::unique_ptr<SpgemmExecutor> make_cusparse_spgemm(sparsetc_handle_s& handle, const SpgemmProblem& problem) {
  return std::make_unique<CusparseSpgemm>(handle, problem);
}

}  // namespace sparsetc::detail
