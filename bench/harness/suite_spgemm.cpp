// SpGEMM suite: C = A·A for square A, C = A·Aᵀ otherwise (rows != cols), in f32 and f64.
//
// Variants per matrix and type T:
//   cusparse_alg{1,2,3}/T/malloc  the CUDALibrarySamples flow (workEstimation; ALG2/ALG3: getNumProducts
//                                 and estimateMemory with --chunk-fraction; compute; allocate C; copy),
//                                 timed whole, with every cudaMalloc/cudaFree of buffers and of C inside
//   cusparse_alg{1,2,3}/T/pool    the same with all of those from a stream-ordered pool whose release
//                                 threshold is raised: after warm-up, allocations are served from cache
//   sparsetc/T/api                sparsetc_spgemm_plan_create + _symbolic + _numeric (creating C) +
//                                 plan destroy, through the C API, as a caller does it (ALG_AUTO)
//   sparsetc/T/binned             the same forced to SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH; every
//                                 allocation of ours (operands' canonical copies, C~, C) inside the
//                                 timed call, the library's peak memory reported
// Each timed run frees the previous run's C first, so one run = one C allocated and one freed.
// A failure such as CUSPARSE_STATUS_INSUFFICIENT_RESOURCES or an allocation beyond the device's
// memory is recorded as a failed variant.
#include <cusparse.h>

#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>

#include "harness/device_kernels.hpp"
#include "harness/device_memory.hpp"
#include "harness/raii.hpp"
#include "harness/suites.hpp"
#include "harness/values.hpp"

namespace bench {
namespace {

const float kOneF = 1.0f, kZeroF = 0.0f;
const double kOneD = 1.0, kZeroD = 0.0;

std::string megabytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", double(bytes) / 1e6);
  return text;
}

// A, B (= A or Aᵀ), the products count, nnz(C) and the sampled-row references.
struct SpgemmMatrix {
  const MatrixInput& input;
  const HostCsr& a;
  HostCsr at;
  const HostCsr* b = nullptr;
  int64_t products = 0, nnz_c = -1;
  std::vector<int64_t> rows;
  std::map<cudaDataType, DeviceCsr> a_dev, b_dev;
  std::map<cudaDataType, SpgemmReference> refs;
  DeviceBuffer check_counts;  // for download_output, allocated before any variant

  SpgemmMatrix(const MatrixInput& in, const Options& o)
      : input(in), a(in.A), check_counts(3 * sizeof(unsigned long long)) {
    if (a.rows != a.cols) at = transpose(a);
    b = a.rows == a.cols ? &a : &at;
    products = count_products(a, *b);
    if (double(products) <= o.ref_max_products) nnz_c = spgemm_nnz(a, *b);
    rows = sample_rows(a, o.sample_rows, o.seed + 23);
  }
  bool square() const { return b == &a; }
  const DeviceCsr& A(cudaDataType t) {
    auto it = a_dev.find(t);
    if (it == a_dev.end()) it = a_dev.emplace(t, upload_csr(a, rounded_values(a, t), t)).first;
    return it->second;
  }
  const DeviceCsr& B(cudaDataType t) {
    if (square()) return A(t);
    auto it = b_dev.find(t);
    if (it == b_dev.end()) it = b_dev.emplace(t, upload_csr(*b, rounded_values(*b, t), t)).first;
    return it->second;
  }
  const SpgemmReference& reference(cudaDataType t) {
    auto it = refs.find(t);
    if (it == refs.end())
      it = refs.emplace(t, spgemm_reference(a, rounded_values(a, t), *b, rounded_values(*b, t), rows, nnz_c)).first;
    return it->second;
  }
  // CSR bytes with int32 offsets and indices.
  static double csr_bytes(int64_t rows, int64_t nnz, cudaDataType t) {
    return double(rows + 1) * 4 + double(nnz) * (4 + double(type_size(t)));
  }
};

// Reads back what check_spgemm needs of a device CSR result.
SpgemmOutput download_output(Context& ctx, SpgemmMatrix& mat, const int* row_ptr, const int* col, const void* val,
                             cudaDataType type, int64_t rows, int64_t cols, int64_t nnz) {
  SpgemmOutput out;
  out.rows = rows;
  out.nnz = nnz;
  out.row_ptr.resize(size_t(rows + 1));
  BENCH_CUDA(cudaMemcpyAsync(out.row_ptr.data(), row_ptr, out.row_ptr.size() * sizeof(int), cudaMemcpyDeviceToHost,
                             ctx.stream));
  unsigned long long* counts = mat.check_counts.as<unsigned long long>();
  BENCH_CUDA(launch_check_csr(row_ptr, col, val, type, rows, cols, nnz, counts, ctx.stream));
  unsigned long long c[3] = {0, 0, 0};
  BENCH_CUDA(cudaMemcpyAsync(c, counts, sizeof c, cudaMemcpyDeviceToHost, ctx.stream));
  BENCH_CUDA(cudaStreamSynchronize(ctx.stream));
  out.bad_rows = c[0];
  out.bad_entries = c[1];
  out.nonfinite = c[2];
  if (out.bad_rows) return out;  // offsets are not to be trusted: the check fails before reading rows
  const size_t es = type_size(type);
  std::vector<unsigned char> raw;
  for (int64_t r : mat.rows) {
    const int64_t begin = out.row_ptr[size_t(r)], end = out.row_ptr[size_t(r + 1)], len = end - begin;
    if (len <= 0) continue;
    const size_t at = out.cols.size();
    out.cols.resize(at + size_t(len));
    raw.resize(size_t(len) * es);
    BENCH_CUDA(cudaMemcpy(out.cols.data() + at, col + begin, size_t(len) * sizeof(int), cudaMemcpyDeviceToHost));
    BENCH_CUDA(cudaMemcpy(raw.data(), static_cast<const unsigned char*>(val) + size_t(begin) * es, raw.size(),
                          cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < len; ++i)
      out.values.push_back(type == CUDA_R_64F ? reinterpret_cast<const double*>(raw.data())[i]
                                              : double(reinterpret_cast<const float*>(raw.data())[i]));
  }
  return out;
}

class CusparseSpgemm final : public Variant {
 public:
  CusparseSpgemm(Context& ctx, SpgemmMatrix& mat, cusparseSpGEMMAlg_t alg, cudaDataType type, bool pooled)
      : ctx_(ctx), mat_(mat), alg_(alg), type_(type), pooled_(pooled) {}

  void setup() override {
    alloc_ = std::make_unique<StreamAllocator>(pooled_, ctx_.stream, ctx_.options.device);
    const DeviceCsr& a = mat_.A(type_);
    const DeviceCsr& b = mat_.B(type_);
    BENCH_CUSPARSE(cusparseCreateCsr(&a_.d, a.rows, a.cols, a.nnz, a.row_ptr.data(), a.col.data(), a.val.data(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type_));
    BENCH_CUSPARSE(cusparseCreateCsr(&b_.d, b.rows, b.cols, b.nnz, b.row_ptr.data(), b.col.data(), b.val.data(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type_));
  }

  void poison() override { poison_next_ = true; }

  void run() override {
    release_output();
    cusparseHandle_t h = ctx_.cusparse;
    const cusparseOperation_t op = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const void* one = type_ == CUDA_R_64F ? static_cast<const void*>(&kOneD) : &kOneF;
    const void* zero = type_ == CUDA_R_64F ? static_cast<const void*>(&kZeroD) : &kZeroF;
    const float chunk = float(ctx_.options.chunk_fraction);
    const int64_t rows = mat_.a.rows, cols = mat_.b->cols;

    c_row_ = static_cast<int*>(alloc_->allocate(size_t(rows + 1) * sizeof(int)));
    if (poison_next_) BENCH_CUDA(cudaMemsetAsync(c_row_, 0xFF, size_t(rows + 1) * sizeof(int), ctx_.stream));
    SpMatDescr c;
    BENCH_CUSPARSE(cusparseCreateCsr(&c.d, rows, cols, 0, c_row_, nullptr, nullptr, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type_));
    SpGemmDescr d;
    BENCH_CUSPARSE(cusparseSpGEMM_createDescr(&d.d));
    size_t size1 = 0, size2 = 0, size3 = 0;
    BENCH_CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, &size1,
                                                 nullptr));
    void* buffer1 = alloc_->allocate(size1);
    BENCH_CUSPARSE(cusparseSpGEMM_workEstimation(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, &size1,
                                                 buffer1));
    if (alg_ == CUSPARSE_SPGEMM_ALG1) {
      BENCH_CUSPARSE(cusparseSpGEMM_compute(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, &size2, nullptr));
    } else {
      BENCH_CUSPARSE(cusparseSpGEMM_getNumProducts(d.d, &reported_products_));
      BENCH_CUSPARSE(cusparseSpGEMM_estimateMemory(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, chunk,
                                                   &size3, nullptr, nullptr));
      void* buffer3 = alloc_->allocate(size3);
      BENCH_CUSPARSE(cusparseSpGEMM_estimateMemory(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, chunk,
                                                   &size3, buffer3, &size2));
      alloc_->release(buffer3);  // may be freed before compute
    }
    void* buffer2 = alloc_->allocate(size2);
    BENCH_CUSPARSE(cusparseSpGEMM_compute(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d, &size2, buffer2));
    int64_t c_rows = 0, c_cols = 0, nnz = 0;
    BENCH_CUSPARSE(cusparseSpMatGetSize(c.d, &c_rows, &c_cols, &nnz));
    c_col_ = static_cast<int*>(alloc_->allocate(size_t(nnz) * sizeof(int)));
    c_val_ = alloc_->allocate(size_t(nnz) * type_size(type_));
    if (poison_next_) {
      BENCH_CUDA(cudaMemsetAsync(c_col_, 0xFF, size_t(nnz) * sizeof(int), ctx_.stream));
      BENCH_CUDA(cudaMemsetAsync(c_val_, 0xFF, size_t(nnz) * type_size(type_), ctx_.stream));
    }
    BENCH_CUSPARSE(cusparseCsrSetPointers(c.d, c_row_, c_col_, c_val_));
    BENCH_CUSPARSE(cusparseSpGEMM_copy(h, op, op, one, a_.d, b_.d, zero, c.d, type_, alg_, d.d));
    alloc_->release(buffer1);
    alloc_->release(buffer2);
    c_nnz_ = nnz;
    poison_next_ = false;
    if (note_.empty()) {
      note_ = "buffers " + megabytes(size1) + " + " + megabytes(size2);
      if (alg_ != CUSPARSE_SPGEMM_ALG1)
        note_ += " (+ " + megabytes(size3) + " during estimate), cuSPARSE products " +
                 std::to_string(reported_products_);
    }
  }

  CheckResult check() override {
    const SpgemmOutput out =
        download_output(ctx_, mat_, c_row_, c_col_, c_val_, type_, mat_.a.rows, mat_.b->cols, c_nnz_);
    return check_spgemm(mat_.reference(type_), out, spgemm_tolerance(type_));
  }

  std::string note() const override { return note_; }

 private:
  void release_output() {
    if (!alloc_) return;
    alloc_->release(c_row_);
    alloc_->release(c_col_);
    alloc_->release(c_val_);
    c_row_ = c_col_ = nullptr;
    c_val_ = nullptr;
  }

  Context& ctx_;
  SpgemmMatrix& mat_;
  cusparseSpGEMMAlg_t alg_;
  cudaDataType type_;
  bool pooled_;
  SpMatDescr a_, b_;
  std::unique_ptr<StreamAllocator> alloc_;  // declared after the descriptors: freed first
  int *c_row_ = nullptr, *c_col_ = nullptr;
  void* c_val_ = nullptr;
  int64_t c_nnz_ = 0, reported_products_ = -1;
  bool poison_next_ = false;
  std::string note_;
};

class SparsetcSpgemm final : public Variant {
 public:
  SparsetcSpgemm(Context& ctx, SpgemmMatrix& mat, cudaDataType type,
                 sparsetc_spgemm_alg_t alg = SPARSETC_SPGEMM_ALG_AUTO)
      : ctx_(ctx), mat_(mat), type_(type), alg_(alg) {}

  void setup() override {
    sparsetc_handle_t h = ctx_.stc;
    const sparsetc_value_type_t vt = sparsetc_value_type_t(type_);
    const DeviceCsr& a = mat_.A(type_);
    BENCH_STC(h, sparsetc_matrix_create_csr(h, &a_.m, a.rows, a.cols, a.nnz, a.row_ptr.data(), a.col.data(),
                                            a.val.data(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, vt,
                                            SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    if (!mat_.square()) {
      const DeviceCsr& b = mat_.B(type_);
      BENCH_STC(h, sparsetc_matrix_create_csr(h, &b_.m, b.rows, b.cols, b.nnz, b.row_ptr.data(), b.col.data(),
                                              b.val.data(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO,
                                              vt, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    }
  }

  // C is created inside sparsetc_spgemm_numeric, so it cannot be poisoned; the structure check
  // (every row, every entry) and the sampled values still catch unwritten output.
  void poison() override {}

  void run() override {
    sparsetc_handle_t h = ctx_.stc;
    c_.reset();
    StcSpgemmPlan plan;
    const sparsetc_compute_type_t compute = type_ == CUDA_R_64F ? SPARSETC_COMPUTE_64F : SPARSETC_COMPUTE_32F;
    BENCH_STC(h, sparsetc_spgemm_plan_create(h, &plan.p, SPARSETC_OP_NON_TRANSPOSE, a_.m, SPARSETC_OP_NON_TRANSPOSE,
                                             b_.m ? b_.m : a_.m, compute, alg_, nullptr));
    int64_t nnz = 0;
    BENCH_STC(h, sparsetc_spgemm_symbolic(plan.p, &nnz));
    BENCH_STC(h, sparsetc_spgemm_numeric(plan.p, &c_.m));
    if (note_.empty()) {
      sparsetc_spgemm_alg_t alg = 0;
      char reason[256] = {0};
      BENCH_STC(h, sparsetc_spgemm_plan_get_alg(plan.p, &alg, reason, sizeof reason));
      note_ = "alg " + std::to_string(alg) + ": " + reason;
    }
  }

  CheckResult check() override {
    sparsetc_handle_t h = ctx_.stc;
    StcMatrix converted;
    sparsetc_matrix_t c = c_.m;
    sparsetc_matrix_info_t info = {};
    info.struct_size = sizeof info;
    BENCH_STC(h, sparsetc_matrix_get_info(c, &info));
    if (info.memory != SPARSETC_MEMORY_DEVICE || info.format != SPARSETC_FORMAT_CSR) {
      CheckResult bad;
      bad.ok = false;
      bad.message = "C is not a device CSR matrix";
      return bad;
    }
    if (info.offset_type != SPARSETC_INDEX_32 || info.index_type != SPARSETC_INDEX_32 ||
        info.base != SPARSETC_BASE_ZERO) {  // the check reads 32-bit zero-based arrays
      BENCH_STC(h, sparsetc_matrix_convert(h, c, SPARSETC_FORMAT_CSR, SPARSETC_INDEX_32, SPARSETC_INDEX_32,
                                           SPARSETC_BASE_ZERO, info.value_type, &converted.m));
      c = converted.m;
    }
    void *offsets = nullptr, *indices = nullptr, *values = nullptr;
    BENCH_STC(h, sparsetc_matrix_get_arrays(c, &offsets, &indices, &values));
    const SpgemmOutput out =
        download_output(ctx_, mat_, static_cast<const int*>(offsets), static_cast<const int*>(indices), values,
                        cudaDataType(info.value_type), info.rows, info.cols, info.nnz);
    return check_spgemm(mat_.reference(type_), out, spgemm_tolerance(type_));
  }

  std::string note() const override { return note_; }

  void mark_library_memory() override { memory_mark_ = sparsetc_memory_mark(ctx_.stc); }
  double library_memory_bytes() override { return sparsetc_memory_peak(ctx_.stc, memory_mark_); }

 private:
  Context& ctx_;
  SpgemmMatrix& mat_;
  cudaDataType type_;
  sparsetc_spgemm_alg_t alg_;
  StcMatrix a_, b_, c_;
  std::string note_;
  int64_t memory_mark_ = -1;
};

struct CusparseAlg {
  const char* name;
  cusparseSpGEMMAlg_t alg;
  const char* alg_name;
};
const CusparseAlg kAlgs[] = {{"cusparse_alg1", CUSPARSE_SPGEMM_ALG1, "CUSPARSE_SPGEMM_ALG1"},
                             {"cusparse_alg2", CUSPARSE_SPGEMM_ALG2, "CUSPARSE_SPGEMM_ALG2"},
                             {"cusparse_alg3", CUSPARSE_SPGEMM_ALG3, "CUSPARSE_SPGEMM_ALG3"}};

}  // namespace

void run_spgemm_suite(Context& ctx, const MatrixInput& input) {
  const Options& o = ctx.options;
  const HostCsr& a = input.A;
  CaseClock clock(o.timeout_per_case_s);
  const size_t first = ctx.results.size();
  Result base = case_result(input);
  base.op = "spgemm";

  std::unique_ptr<SpgemmMatrix> mat;
  try {
    mat = std::make_unique<SpgemmMatrix>(input, o);
  } catch (const VariantError& e) {
    base.variant = "(operands)";
    record_not_run(ctx, base, e.status(), e.what());
    return;
  }
  base.flops = 2.0 * double(mat->products);

  auto consider = [&](Result r, auto make) {
    if (!variant_selected(o, r.variant)) return;
    if (clock.expired()) return record_not_run(ctx, r, Status::skipped, "--timeout-per-case reached");
    try {
      std::unique_ptr<Variant> v = make();
      execute_variant(ctx, *v, r);
    } catch (const VariantError& e) {  // operands could not be uploaded
      record_not_run(ctx, r, e.status(), e.what());
    } catch (const std::bad_alloc&) {
      record_not_run(ctx, r, Status::failed, "host out of memory");
    }
  };
  for (const std::string& tn : o.spgemm_types) {
    const cudaDataType t = tn == "f64" ? CUDA_R_64F : CUDA_R_32F;
    Result typed = base;
    typed.value_type = tn;
    if (mat->nnz_c >= 0)  // A and B read once, C written once
      typed.floor_bytes = SpgemmMatrix::csr_bytes(a.rows, a.nnz(), t) +
                          SpgemmMatrix::csr_bytes(mat->b->rows, mat->b->nnz(), t) +
                          SpgemmMatrix::csr_bytes(a.rows, mat->nnz_c, t);
    for (const CusparseAlg& alg : kAlgs)
      for (const std::string& mode : o.spgemm_modes) {
        Result r = typed;
        r.variant = std::string(alg.name) + "/" + tn + "/" + mode;
        r.provider = "cusparse";
        r.format = "csr";
        r.alg = alg.alg_name;
        r.mode = mode;
        const bool pooled = mode == "pool";
        consider(r, [&] { return std::make_unique<CusparseSpgemm>(ctx, *mat, alg.alg, t, pooled); });
      }
    Result r = typed;
    r.variant = "sparsetc/" + tn + "/api";
    r.provider = "sparsetc";
    r.format = "csr";
    r.alg = "SPARSETC_SPGEMM_ALG_AUTO";
    r.mode = "api";
    consider(r, [&] { return std::make_unique<SparsetcSpgemm>(ctx, *mat, t); });
    Result binned = typed;
    binned.variant = "sparsetc/" + tn + "/binned";
    binned.provider = "sparsetc";
    binned.format = "csr";
    binned.alg = "SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH";
    binned.mode = "api";
    consider(binned, [&] {
      return std::make_unique<SparsetcSpgemm>(ctx, *mat, t, SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH);
    });
  }
  report_case(ctx.results, first, clock);
}

}  // namespace bench
