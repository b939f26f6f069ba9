// SpMM suite: C = A·B with B dense K x N, C dense M x N (fp32), alpha = 1, beta = 0 (C not read).
//
// Variants per (matrix, N), for each layout of B and C (row / col) and input type (f32, f16, bf16;
// fp32 accumulation and fp32 C throughout):
//   csr_{default,alg1,alg2,alg3}/T/L  cusparseSpMM on CSR, preprocess called once in setup
//   bsr16/T/L                         cusparseXcsr2bsr (block 16, row-major blocks) + BSR_ALG1
//   bell{16,32}/f16/L                 Blocked-ELL built on the host from the CSR + BLOCKED_ELL_ALG1
//   gemm_{f16,f32,tf32}/L             cublasGemmEx on the densified A (fp32 compute; tf32 rounds inputs)
//   sparsetc/T/L                      sparsetc_spmm_plan_create + sparsetc_spmm_execute (C API), AUTO
//   sparsetc_tc/T/L                   the same forced to SPARSETC_SPMM_ALG_BCSR_TC (T = f16, bf16, or
//                                     tf32: f32 inputs with SPARSETC_COMPUTE_TF32); setup_ms is the
//                                     plan's preprocessing (normalise, 1-SA when it pays, BCSR)
// Whether cuSPARSE takes an algorithm for a layout and type is decided by cuSPARSE itself: a
// refusal (NOT_SUPPORTED from bufferSize or SpMM) is recorded as `unsupported`, with its message.
// B and C rows are padded to a multiple of 32 (the BSR and Blocked-ELL shapes need whole blocks);
// column-major operands use the padded row count as leading dimension.
#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <utility>

#include "harness/device_kernels.hpp"
#include "harness/device_memory.hpp"
#include "harness/formats.hpp"
#include "harness/raii.hpp"
#include "harness/suites.hpp"
#include "harness/values.hpp"

namespace bench {
namespace {

const float kAlpha = 1.0f, kBeta = 0.0f;
constexpr int64_t kPad = 32;
constexpr int64_t kBsrBlock = 16;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

cudaDataType parse_type(const std::string& t) {
  return t == "f16" ? CUDA_R_16F : t == "bf16" ? CUDA_R_16BF : CUDA_R_32F;
}

std::string gb(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", bytes / 1e9);
  return text;
}

// What one matrix shares across N: A in every input type, the sampled rows, Blocked-ELL on the host.
struct SpmmMatrix {
  const MatrixInput& input;
  const HostCsr& a;
  int64_t m, k, m_alloc, k_alloc;
  std::vector<int64_t> rows;
  DeviceBuffer rows_dev;
  bool fits_f16;
  std::map<cudaDataType, std::vector<double>> values;
  std::map<cudaDataType, DeviceCsr> csr;
  std::map<int64_t, EllShape> shapes;
  std::map<int64_t, HostBlockedEll> ells;

  SpmmMatrix(const MatrixInput& in, const Options& o)
      : input(in), a(in.A), m(in.A.rows), k(in.A.cols), m_alloc(round_up(std::max<int64_t>(in.A.rows, 1), kPad)),
        k_alloc(round_up(std::max<int64_t>(in.A.cols, 1), kPad)), fits_f16(max_abs_value(in.A) <= 65504.0) {
    rows = sample_rows(a, o.sample_rows, o.seed + 11);
    rows_dev = DeviceBuffer(std::max<size_t>(rows.size(), 1) * sizeof(int64_t));
    if (!rows.empty())
      BENCH_CUDA(cudaMemcpy(rows_dev.data(), rows.data(), rows.size() * sizeof(int64_t), cudaMemcpyHostToDevice));
  }
  const std::vector<double>& rounded(cudaDataType t) {
    auto it = values.find(t);
    if (it == values.end()) it = values.emplace(t, rounded_values(a, t)).first;
    return it->second;
  }
  const DeviceCsr& device_csr(cudaDataType t) {
    auto it = csr.find(t);
    if (it == csr.end()) it = csr.emplace(t, upload_csr(a, rounded(t), t)).first;
    return it->second;
  }
  const EllShape& shape(int64_t block) {
    auto it = shapes.find(block);
    if (it == shapes.end()) it = shapes.emplace(block, blocked_ell_shape(a, block, 2)).first;
    return it->second;
  }
  const HostBlockedEll& blocked_ell(int64_t block) {
    auto it = ells.find(block);
    if (it == ells.end()) it = ells.emplace(block, build_blocked_ell(a, rounded(CUDA_R_16F), block, CUDA_R_16F)).first;
    return it->second;
  }
};

// What one (matrix, N) case shares: B per input type and layout, C per layout, references per type.
struct SpmmOperands {
  Context& ctx;
  SpmmMatrix& mat;
  int64_t n;
  uint64_t b_seed;
  std::map<std::pair<cudaDataType, bool>, DeviceBuffer> b;
  std::map<bool, DeviceBuffer> c;
  int64_t b_offset, c_offset;  // elements before B and C in their buffers (--dense-offset)
  std::map<cudaDataType, SpmmReference> refs;
  DeviceBuffer gathered, counter;

  SpmmOperands(Context& context, SpmmMatrix& matrix, int64_t columns)
      : ctx(context),
        mat(matrix),
        n(columns),
        b_seed(context.options.seed * 7919 + 17),
        b_offset(context.options.b_offset),
        c_offset(context.options.c_offset) {
    gathered = DeviceBuffer(std::max<size_t>(mat.rows.size(), 1) * size_t(n) * sizeof(float));
    counter = DeviceBuffer(sizeof(unsigned long long));
  }
  int64_t ldb(bool row) const { return row ? n : mat.k_alloc; }
  int64_t ldc(bool row) const { return row ? n : mat.m_alloc; }
  size_t c_bytes() const { return size_t(mat.m_alloc) * size_t(n) * sizeof(float); }

  // Generates B (every padded row) and allocates C for each type and layout in use; computes the
  // references. Done before any variant, so that no variant's setup time includes it.
  void prepare(const std::vector<cudaDataType>& types, const std::vector<bool>& layouts) {
    for (bool row : layouts) {
      c.emplace(row, DeviceBuffer(c_bytes() + size_t(c_offset) * sizeof(float)));
      for (cudaDataType t : types) {
        b.emplace(std::make_pair(t, row), DeviceBuffer((size_t(mat.k_alloc) * size_t(n) + size_t(b_offset)) * type_size(t)));
        BENCH_CUDA(launch_fill_dense(B(t, row), mat.k_alloc, n, ldb(row), row, t, b_seed, ctx.stream));
      }
    }
    for (cudaDataType t : types) refs.emplace(t, spmm_reference(mat.a, mat.rounded(t), n, t, b_seed, mat.rows));
    BENCH_CUDA(cudaStreamSynchronize(ctx.stream));
  }
  void* B(cudaDataType t, bool row) { return static_cast<char*>(b.at({t, row}).data()) + b_offset * type_size(t); }
  float* C(bool row) { return c.at(row).as<float>() + c_offset; }

  CheckResult check(bool row, cudaDataType ref_type, double tol) {
    const int64_t count = int64_t(mat.rows.size());
    BENCH_CUDA(launch_gather_rows(C(row), n, ldc(row), row, mat.rows_dev.as<const int64_t>(), count,
                                  gathered.as<float>(), ctx.stream));
    BENCH_CUDA(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned long long), ctx.stream));
    BENCH_CUDA(launch_count_nonfinite(C(row), mat.m, n, ldc(row), row, counter.as<unsigned long long>(), ctx.stream));
    std::vector<float> got(size_t(count * n));
    unsigned long long nonfinite = 0;
    BENCH_CUDA(cudaMemcpyAsync(got.data(), gathered.data(), got.size() * sizeof(float), cudaMemcpyDeviceToHost,
                               ctx.stream));
    BENCH_CUDA(cudaMemcpyAsync(&nonfinite, counter.data(), sizeof nonfinite, cudaMemcpyDeviceToHost, ctx.stream));
    BENCH_CUDA(cudaStreamSynchronize(ctx.stream));
    return check_spmm(refs.at(ref_type), got, nonfinite, tol);
  }
};

class SpmmVariant : public Variant {
 public:
  SpmmVariant(Context& ctx, SpmmOperands& ops, bool row, cudaDataType ref_type, double tol)
      : ctx_(ctx), ops_(ops), row_(row), ref_type_(ref_type), tol_(tol) {}
  void poison() override { BENCH_CUDA(cudaMemsetAsync(ops_.C(row_), 0xFF, ops_.c_bytes(), ctx_.stream)); }
  CheckResult check() override { return ops_.check(row_, ref_type_, tol_); }
  std::string note() const override { return note_; }

 protected:
  cusparseOrder_t order() const { return row_ ? CUSPARSE_ORDER_ROW : CUSPARSE_ORDER_COL; }

  Context& ctx_;
  SpmmOperands& ops_;
  bool row_;
  cudaDataType ref_type_;
  double tol_;
  std::string note_;
};

// cusparseSpMM with a sparse descriptor made by the subclass; B and C as the case holds them.
class CusparseSpmm : public SpmmVariant {
 public:
  CusparseSpmm(Context& ctx, SpmmOperands& ops, bool row, cudaDataType type, cusparseSpMMAlg_t alg)
      : SpmmVariant(ctx, ops, row, type, spmm_tolerance(type)), type_(type), alg_(alg) {}
  void run() override {
    BENCH_CUSPARSE(cusparseSpMM(ctx_.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                &kAlpha, a_.d, b_.d, &kBeta, c_.d, CUDA_R_32F, alg_, work_.data()));
  }

 protected:
  // b_rows / c_rows: the dense shapes the sparse descriptor implies (padded for blocked formats).
  void describe_dense_and_workspace(int64_t b_rows, int64_t c_rows, bool preprocess) {
    BENCH_CUSPARSE(cusparseCreateDnMat(&b_.d, b_rows, ops_.n, ops_.ldb(row_), ops_.B(type_, row_), type_, order()));
    BENCH_CUSPARSE(cusparseCreateDnMat(&c_.d, c_rows, ops_.n, ops_.ldc(row_), ops_.C(row_), CUDA_R_32F, order()));
    size_t bytes = 0;
    BENCH_CUSPARSE(cusparseSpMM_bufferSize(ctx_.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                           CUSPARSE_OPERATION_NON_TRANSPOSE, &kAlpha, a_.d, b_.d, &kBeta, c_.d,
                                           CUDA_R_32F, alg_, &bytes));
    work_ = DeviceBuffer(bytes);
    if (preprocess)
      BENCH_CUSPARSE(cusparseSpMM_preprocess(ctx_.cusparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                             CUSPARSE_OPERATION_NON_TRANSPOSE, &kAlpha, a_.d, b_.d, &kBeta, c_.d,
                                             CUDA_R_32F, alg_, work_.data()));
  }

  cudaDataType type_;
  cusparseSpMMAlg_t alg_;
  SpMatDescr a_;
  DnMatDescr b_, c_;
  DeviceBuffer work_;
};

class CsrSpmm final : public CusparseSpmm {
 public:
  using CusparseSpmm::CusparseSpmm;
  void setup() override {
    const DeviceCsr& a = ops_.mat.device_csr(type_);
    BENCH_CUSPARSE(cusparseCreateCsr(&a_.d, a.rows, a.cols, a.nnz, a.row_ptr.data(), a.col.data(), a.val.data(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type_));
    describe_dense_and_workspace(a.cols, a.rows, true);
  }
};

class BsrSpmm final : public CusparseSpmm {
 public:
  BsrSpmm(Context& ctx, SpmmOperands& ops, bool row, cudaDataType type)
      : CusparseSpmm(ctx, ops, row, type, CUSPARSE_SPMM_BSR_ALG1) {}
  void setup() override {
    bsr_ = make_device_bsr(ctx_.cusparse, ops_.mat.device_csr(CUDA_R_32F), kBsrBlock, type_, ctx_.stream);
    BENCH_CUSPARSE(cusparseCreateBsr(&a_.d, bsr_.block_rows, bsr_.block_cols, bsr_.blocks, kBsrBlock, kBsrBlock,
                                     bsr_.row_ptr.data(), bsr_.col.data(), bsr_.val.data(), CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type_, CUSPARSE_ORDER_ROW));
    const double fill = bsr_.blocks ? double(ops_.mat.a.nnz()) / (double(bsr_.blocks) * kBsrBlock * kBsrBlock) : 0;
    char text[96];
    std::snprintf(text, sizeof text, "blocks=%lld fill=%.3f", (long long)bsr_.blocks, fill);
    note_ = text;
    describe_dense_and_workspace(bsr_.block_cols * kBsrBlock, bsr_.block_rows * kBsrBlock, false);
  }

 private:
  DeviceBsr bsr_;
};

class BlockedEllSpmm final : public CusparseSpmm {
 public:
  BlockedEllSpmm(Context& ctx, SpmmOperands& ops, bool row, int64_t block)
      : CusparseSpmm(ctx, ops, row, CUDA_R_16F, CUSPARSE_SPMM_BLOCKED_ELL_ALG1), block_(block) {}
  void setup() override {
    const HostBlockedEll& e = ops_.mat.blocked_ell(block_);  // built once per matrix, on the host
    const EllShape& s = e.shape;
    col_ = DeviceBuffer(e.col_ind.size() * sizeof(int32_t));
    val_ = DeviceBuffer(e.values.size() * sizeof(uint16_t));
    BENCH_CUDA(cudaMemcpy(col_.data(), e.col_ind.data(), e.col_ind.size() * sizeof(int32_t), cudaMemcpyHostToDevice));
    BENCH_CUDA(cudaMemcpy(val_.data(), e.values.data(), e.values.size() * sizeof(uint16_t), cudaMemcpyHostToDevice));
    BENCH_CUSPARSE(cusparseCreateBlockedEll(&a_.d, s.block_rows * block_, s.block_cols * block_, block_,
                                            s.width * block_, col_.data(), val_.data(), CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_16F));
    char text[128];
    std::snprintf(text, sizeof text, "width=%lld blocks, stored/nnz=%.2f, %s", (long long)s.width, s.blowup,
                  gb(double(s.bytes)).c_str());
    note_ = text;
    describe_dense_and_workspace(s.block_cols * block_, s.block_rows * block_, false);
  }

 private:
  int64_t block_;
  DeviceBuffer col_, val_;
};

enum class GemmKind { f16, f32, tf32 };

class CublasGemm final : public SpmmVariant {
 public:
  CublasGemm(Context& ctx, SpmmOperands& ops, bool row, GemmKind kind)
      : SpmmVariant(ctx, ops, row, kind == GemmKind::f16 ? CUDA_R_16F : CUDA_R_32F,
                    kind == GemmKind::f32 ? spmm_tolerance(CUDA_R_32F) : spmm_tolerance(CUDA_R_16F)),
        kind_(kind), type_(kind == GemmKind::f16 ? CUDA_R_16F : CUDA_R_32F) {}
  void setup() override {
    const DeviceCsr& a = ops_.mat.device_csr(type_);
    dense_ = DeviceBuffer(size_t(a.rows) * size_t(a.cols) * type_size(type_));
    BENCH_CUDA(cudaMemsetAsync(dense_.data(), 0, dense_.size(), ctx_.stream));
    BENCH_CUDA(launch_densify(a.row_ptr.as<const int>(), a.col.as<const int>(), a.val.data(), type_, a.rows,
                              row_ ? a.cols : a.rows, row_, dense_.data(), ctx_.stream));
  }
  void run() override {
    const int m = int(ops_.mat.m), n = int(ops_.n), k = int(ops_.mat.k);
    const cublasComputeType_t compute = kind_ == GemmKind::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    void* b = ops_.B(type_, row_);
    float* c = ops_.C(row_);
    if (row_)  // row-major C = A B is column-major C^T = B^T A^T
      BENCH_CUBLAS(cublasGemmEx(ctx_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &kAlpha, b, type_,
                                int(ops_.ldb(true)), dense_.data(), type_, k, &kBeta, c, CUDA_R_32F,
                                int(ops_.ldc(true)), compute, CUBLAS_GEMM_DEFAULT));
    else
      BENCH_CUBLAS(cublasGemmEx(ctx_.cublas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &kAlpha, dense_.data(), type_, m, b,
                                type_, int(ops_.ldb(false)), &kBeta, c, CUDA_R_32F, int(ops_.ldc(false)), compute,
                                CUBLAS_GEMM_DEFAULT));
  }

 private:
  GemmKind kind_;
  cudaDataType type_;
  DeviceBuffer dense_;
};

class SparsetcSpmm final : public SpmmVariant {
 public:
  SparsetcSpmm(Context& ctx, SpmmOperands& ops, bool row, cudaDataType type,
               sparsetc_spmm_alg_t alg = SPARSETC_SPMM_ALG_AUTO, sparsetc_compute_type_t compute = SPARSETC_COMPUTE_32F)
      : SpmmVariant(ctx, ops, row, type,
                    compute == SPARSETC_COMPUTE_TF32 ? spmm_tolerance(CUDA_R_16F) : spmm_tolerance(type)),  // tf32 ~ f16 mantissa
        type_(type), alg_(alg), compute_(compute) {}
  void setup() override {
    sparsetc_handle_t h = ctx_.stc;
    const DeviceCsr& a = ops_.mat.device_csr(type_);
    const sparsetc_value_type_t vt = sparsetc_value_type_t(type_);  // numerically equal to cudaDataType
    const sparsetc_order_t order = row_ ? SPARSETC_ORDER_ROW : SPARSETC_ORDER_COL;
    BENCH_STC(h, sparsetc_matrix_create_csr(h, &a_.m, a.rows, a.cols, a.nnz, a.row_ptr.data(), a.col.data(),
                                            a.val.data(), SPARSETC_INDEX_32, SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, vt,
                                            SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW));
    BENCH_STC(h, sparsetc_dense_create(h, &b_.d, a.cols, ops_.n, ops_.ldb(row_), ops_.B(type_, row_), vt, order,
                                       SPARSETC_MEMORY_DEVICE));
    BENCH_STC(h, sparsetc_dense_create(h, &c_.d, a.rows, ops_.n, ops_.ldc(row_), ops_.C(row_), SPARSETC_VALUE_F32,
                                       order, SPARSETC_MEMORY_DEVICE));
    BENCH_STC(h, sparsetc_spmm_plan_create(h, &plan_.p, SPARSETC_OP_NON_TRANSPOSE, a_.m, b_.d, c_.d, compute_,
                                           alg_));
    sparsetc_spmm_alg_t alg = 0;
    char reason[256] = {0};
    BENCH_STC(h, sparsetc_spmm_plan_get_alg(plan_.p, &alg, reason, sizeof reason));
    note_ = "alg " + std::to_string(alg) + ": " + reason;
    size_t bytes = 0;
    BENCH_STC(h, sparsetc_spmm_workspace_size(plan_.p, &bytes));
    work_ = DeviceBuffer(bytes);
  }
  void run() override {
    BENCH_STC(ctx_.stc, sparsetc_spmm_execute(plan_.p, 1.0, b_.d, 0.0, c_.d, work_.data(), work_.size()));
  }

  void mark_library_memory() override { memory_mark_ = sparsetc_memory_mark(ctx_.stc); }
  double library_memory_bytes() override { return sparsetc_memory_peak(ctx_.stc, memory_mark_); }

 private:
  cudaDataType type_;
  sparsetc_spmm_alg_t alg_;
  sparsetc_compute_type_t compute_;
  StcMatrix a_;
  StcDense b_, c_;
  StcSpmmPlan plan_;
  DeviceBuffer work_;
  int64_t memory_mark_ = -1;
};

struct CsrAlg {
  const char* name;
  cusparseSpMMAlg_t alg;
  const char* alg_name;
};
const CsrAlg kCsrAlgs[] = {
    {"csr_default", CUSPARSE_SPMM_ALG_DEFAULT, "CUSPARSE_SPMM_ALG_DEFAULT"},
    {"csr_alg1", CUSPARSE_SPMM_CSR_ALG1, "CUSPARSE_SPMM_CSR_ALG1"},
    {"csr_alg2", CUSPARSE_SPMM_CSR_ALG2, "CUSPARSE_SPMM_CSR_ALG2"},
    {"csr_alg3", CUSPARSE_SPMM_CSR_ALG3, "CUSPARSE_SPMM_CSR_ALG3"},
};

}  // namespace

void run_spmm_suite(Context& ctx, const MatrixInput& input) {
  const Options& o = ctx.options;
  const HostCsr& a = input.A;
  std::vector<cudaDataType> types;
  for (const std::string& t : o.spmm_types) types.push_back(parse_type(t));
  std::vector<bool> layouts;
  for (const std::string& l : o.layouts) layouts.push_back(l == "row");
  auto has_type = [&](cudaDataType t) { return std::find(types.begin(), types.end(), t) != types.end(); };

  Result shape = case_result(input);
  shape.op = "spmm";

  std::unique_ptr<SpmmMatrix> mat;
  try {
    mat = std::make_unique<SpmmMatrix>(input, o);
  } catch (const VariantError& e) {
    shape.variant = "(operands)";
    record_not_run(ctx, shape, e.status(), e.what());
    return;
  }

  for (int64_t n : o.n_list) {
    CaseClock clock(o.timeout_per_case_s);
    const size_t first = ctx.results.size();
    Result base = shape;
    base.n = n;
    base.flops = 2.0 * double(a.nnz()) * double(n);
    // Bytes floor: A's CSR arrays once, B once, C written once (beta = 0: C is not read).
    auto floor_bytes = [&](cudaDataType in) {
      const double es = double(type_size(in));
      return double(a.rows + 1) * 4 + double(a.nnz()) * (4 + es) + double(a.cols) * double(n) * es +
             double(a.rows) * double(n) * 4;
    };

    std::unique_ptr<SpmmOperands> ops;
    try {
      ops = std::make_unique<SpmmOperands>(ctx, *mat, n);
      ops->prepare(types, layouts);
    } catch (const VariantError& e) {
      Result r = base;
      r.variant = "(operands)";
      record_not_run(ctx, r, e.status(), e.what());
      continue;
    }

    auto consider = [&](Result r, const std::string& skip_reason, auto make) {
      if (!variant_selected(o, r.variant)) return;
      if (clock.expired()) return record_not_run(ctx, r, Status::skipped, "--timeout-per-case reached");
      if (!skip_reason.empty()) return record_not_run(ctx, r, Status::skipped, skip_reason);
      try {
        std::unique_ptr<Variant> v = make();
        execute_variant(ctx, *v, r);
      } catch (const VariantError& e) {
        record_not_run(ctx, r, e.status(), e.what());
      } catch (const std::bad_alloc&) {
        record_not_run(ctx, r, Status::failed, "host out of memory");
      }
    };
    auto variant = [&](const std::string& name, const char* provider, const char* format, const char* alg,
                       const std::string& type, bool row, double floor) {
      Result r = base;
      r.variant = name + "/" + (row ? "row" : "col");
      r.provider = provider;
      r.format = format;
      r.alg = alg;
      r.value_type = type;
      r.layout = row ? "row" : "col";
      r.floor_bytes = floor;
      return r;
    };
    const std::string f16_range = mat->fits_f16 ? "" : "A's values exceed the f16 range (--values file)";

    for (bool row : layouts) {
      for (cudaDataType t : types) {
        const std::string tn = type_name(t);
        const std::string range = t == CUDA_R_16F ? f16_range : "";
        for (const CsrAlg& alg : kCsrAlgs)
          consider(variant(std::string(alg.name) + "/" + tn, "cusparse", "csr", alg.alg_name, tn, row, floor_bytes(t)),
                   range, [&] { return std::make_unique<CsrSpmm>(ctx, *ops, row, t, alg.alg); });
        consider(variant("bsr16/" + tn, "cusparse", "bsr16", "CUSPARSE_SPMM_BSR_ALG1", tn, row, floor_bytes(t)), range,
                 [&] { return std::make_unique<BsrSpmm>(ctx, *ops, row, t); });
      }
      if (has_type(CUDA_R_16F)) {
        for (int64_t block : {int64_t(16), int64_t(32)}) {
          const std::string name = "bell" + std::to_string(block) + "/f16";
          std::string skip = f16_range;
          if (skip.empty() && variant_selected(o, name + (row ? "/row" : "/col"))) {
            const EllShape& s = mat->shape(block);
            if (double(s.bytes) > o.ell_max_gb * 1e9) {
              char text[160];
              std::snprintf(text, sizeof text, "Blocked-ELL would take %s (stored/nnz %.1f) > --ell-max-gb %.1f",
                            gb(double(s.bytes)).c_str(), s.blowup, o.ell_max_gb);
              skip = text;
            }
          }
          consider(variant(name, "cusparse", ("bell" + std::to_string(block)).c_str(), "CUSPARSE_SPMM_BLOCKED_ELL_ALG1",
                           "f16", row, floor_bytes(CUDA_R_16F)),
                   skip, [&] {
                     mat->blocked_ell(block);  // host build, once per matrix, outside setup_ms
                     return std::make_unique<BlockedEllSpmm>(ctx, *ops, row, block);
                   });
        }
      }
      const struct {
        GemmKind kind;
        const char* name;
        const char* type;
        cudaDataType storage;
        bool wanted;
      } gemms[] = {{GemmKind::f16, "gemm_f16", "f16", CUDA_R_16F, has_type(CUDA_R_16F)},
                   {GemmKind::f32, "gemm_f32", "f32", CUDA_R_32F, has_type(CUDA_R_32F)},
                   {GemmKind::tf32, "gemm_tf32", "tf32", CUDA_R_32F, has_type(CUDA_R_32F)}};
      for (const auto& g : gemms) {
        if (!g.wanted) continue;
        const double dense_bytes = double(a.rows) * double(a.cols) * double(type_size(g.storage));
        std::string skip = g.storage == CUDA_R_16F ? f16_range : "";
        if (skip.empty() && dense_bytes > o.dense_max_gb * 1e9)
          skip = "dense A would take " + gb(dense_bytes) + " > --dense-max-gb";
        if (skip.empty() && (a.rows > INT32_MAX || a.cols > INT32_MAX)) skip = "dimensions exceed cuBLAS's int";
        consider(variant(g.name, "cublas", "dense", g.kind == GemmKind::tf32 ? "CUBLAS_COMPUTE_32F_FAST_TF32"
                                                                             : "CUBLAS_COMPUTE_32F",
                         g.type, row, floor_bytes(g.storage)),
                 skip, [&] { return std::make_unique<CublasGemm>(ctx, *ops, row, g.kind); });
      }
      for (cudaDataType t : types) {
        const std::string tn = type_name(t);
        consider(variant("sparsetc/" + tn, "sparsetc", "csr", "SPARSETC_SPMM_ALG_AUTO", tn, row, floor_bytes(t)),
                 t == CUDA_R_16F ? f16_range : "", [&] { return std::make_unique<SparsetcSpmm>(ctx, *ops, row, t); });
        const bool f32 = t == CUDA_R_32F;
        const sparsetc_compute_type_t compute = f32 ? SPARSETC_COMPUTE_TF32 : SPARSETC_COMPUTE_32F;
        consider(variant(std::string("sparsetc_tc/") + (f32 ? "tf32" : tn.c_str()), "sparsetc", "bcsr",
                         "SPARSETC_SPMM_ALG_BCSR_TC", f32 ? "tf32" : tn, row, floor_bytes(t)),
                 t == CUDA_R_16F ? f16_range : "", [&] {
                   return std::make_unique<SparsetcSpmm>(ctx, *ops, row, t, SPARSETC_SPMM_ALG_BCSR_TC, compute);
                 });
        if (!o.all_paths) continue;
        const struct {
          const char* name;
          sparsetc_spmm_alg_t alg;
        } paths[] = {{"sparsetc_csr/", SPARSETC_SPMM_ALG_CSR},
                     {"sparsetc_dcsr/", SPARSETC_SPMM_ALG_DCSR},
                     {"sparsetc_tiled/", SPARSETC_SPMM_ALG_TILED_DCSR}};
        for (const auto& path : paths) {
          const sparsetc_spmm_alg_t alg = path.alg;
          consider(variant(path.name + tn, "sparsetc", "csr", path.name, tn, row, floor_bytes(t)),
                   t == CUDA_R_16F ? f16_range : "",
                   [&, alg] { return std::make_unique<SparsetcSpmm>(ctx, *ops, row, t, alg); });
        }
      }
    }
    report_case(ctx.results, first, clock);
  }
}

}  // namespace bench
