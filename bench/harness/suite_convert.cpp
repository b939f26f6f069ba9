// Conversion suite: format conversions of A (fp32 values) on the device, checked entry by entry
// against a host build. Output buffers are allocated in setup; a timed run is the conversion alone
// (csr2bsr: the count call, which synchronises, and the fill call).
//
// The table kConversions below is where sparsetc's own GPU conversions plug in: give their entry a
// factory (a Variant, as the cuSPARSE ones) and the suite times and checks them on the same inputs,
// and the summary reports their ratio to cuSPARSE. Until then those entries are reported as
// `pending`, with no numbers.
#include <cusparse.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>

#include "harness/device_memory.hpp"
#include "harness/formats.hpp"
#include "harness/suites.hpp"
#include "harness/values.hpp"

namespace bench {
namespace {

constexpr int64_t kBsrBlock = 16;

// What the conversions of one matrix share: A in fp32 on the device and on the host.
struct ConvertMatrix {
  const HostCsr& a;
  std::vector<double> values;  // rounded to f32
  DeviceCsr csr;
  explicit ConvertMatrix(const HostCsr& host) : a(host), values(rounded_values(host, CUDA_R_32F)) {
    csr = upload_csr(a, values, CUDA_R_32F);
  }
  // Host builds the checks compare with, made once.
  const HostCsr& transposed() {
    if (!t_) t_ = std::make_unique<HostCsr>(transpose(a));
    return *t_;
  }
  const HostBsr& bsr() {
    if (!bsr_) bsr_ = std::make_unique<HostBsr>(host_bsr(a, values, kBsrBlock));
    return *bsr_;
  }

 private:
  std::unique_ptr<HostCsr> t_;
  std::unique_ptr<HostBsr> bsr_;
};

template <typename T>
std::vector<T> download(const void* device, size_t count) {
  std::vector<T> host(count);
  if (count) BENCH_CUDA(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

// First index where two arrays differ (bitwise for floats), or -1.
template <typename T>
int64_t first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) return 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) return int64_t(i);
  return -1;
}

CheckResult compare_arrays(const char* name, int64_t at) {
  CheckResult c;
  if (at >= 0) {
    c.ok = false;
    c.message = std::string(name) + " differs from the host build at entry " + std::to_string(at);
  }
  return c;
}

class CusparseCsr2Csc final : public Variant {
 public:
  CusparseCsr2Csc(Context& ctx, ConvertMatrix& mat) : ctx_(ctx), mat_(mat) {}
  void setup() override {
    const DeviceCsr& a = mat_.csr;
    col_ptr_ = DeviceBuffer(size_t(a.cols + 1) * sizeof(int));
    row_ind_ = DeviceBuffer(size_t(a.nnz) * sizeof(int));
    val_ = DeviceBuffer(size_t(a.nnz) * sizeof(float));
    size_t bytes = 0;
    BENCH_CUSPARSE(cusparseCsr2cscEx2_bufferSize(ctx_.cusparse, int(a.rows), int(a.cols), int(a.nnz), a.val.data(),
                                                 a.row_ptr.as<const int>(), a.col.as<const int>(), val_.data(),
                                                 col_ptr_.as<int>(), row_ind_.as<int>(), CUDA_R_32F,
                                                 CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                                 CUSPARSE_CSR2CSC_ALG1, &bytes));
    work_ = DeviceBuffer(bytes);
  }
  void poison() override {
    BENCH_CUDA(cudaMemsetAsync(col_ptr_.data(), 0xFF, col_ptr_.size(), ctx_.stream));
    BENCH_CUDA(cudaMemsetAsync(row_ind_.data(), 0xFF, row_ind_.size(), ctx_.stream));
    BENCH_CUDA(cudaMemsetAsync(val_.data(), 0xFF, val_.size(), ctx_.stream));
  }
  void run() override {
    const DeviceCsr& a = mat_.csr;
    BENCH_CUSPARSE(cusparseCsr2cscEx2(ctx_.cusparse, int(a.rows), int(a.cols), int(a.nnz), a.val.data(),
                                      a.row_ptr.as<const int>(), a.col.as<const int>(), val_.data(), col_ptr_.as<int>(),
                                      row_ind_.as<int>(), CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work_.data()));
  }
  CheckResult check() override {
    BENCH_CUDA(cudaStreamSynchronize(ctx_.stream));
    const HostCsr& t = mat_.transposed();  // sorted rows within each column, as cuSPARSE emits them
    const std::vector<int32_t> want_ptr(t.row_ptr.begin(), t.row_ptr.end());
    std::vector<float> want_val(t.val.size());
    for (size_t i = 0; i < want_val.size(); ++i) want_val[i] = float(t.val[i]);
    const int64_t nnz = mat_.csr.nnz;
    CheckResult c = compare_arrays("column offsets", first_difference(download<int32_t>(col_ptr_.data(), size_t(t.rows + 1)), want_ptr));
    if (c.ok) c = compare_arrays("row indices", first_difference(download<int32_t>(row_ind_.data(), size_t(nnz)), t.col));
    if (c.ok) c = compare_arrays("values", first_difference(download<float>(val_.data(), size_t(nnz)), want_val));
    return c;
  }

 private:
  Context& ctx_;
  ConvertMatrix& mat_;
  DeviceBuffer col_ptr_, row_ind_, val_, work_;
};

class CusparseCsr2Bsr final : public Variant {
 public:
  CusparseCsr2Bsr(Context& ctx, ConvertMatrix& mat) : ctx_(ctx), mat_(mat) {}
  void setup() override {
    convert_ = std::make_unique<Csr2Bsr>(ctx_.cusparse, mat_.csr, kBsrBlock);
    row_ptr_ = DeviceBuffer(size_t(convert_->block_rows() + 1) * sizeof(int));
    blocks_ = convert_->count(row_ptr_.as<int>());  // sizes the outputs; the timed runs count again
    // cuSPARSE's csr2bsr indexes the values with 32-bit arithmetic: past 2^31 values it writes out of
    // bounds (seen on uniform:1000000:12 with 16x16 blocks under compute-sanitizer).
    if (blocks_ * kBsrBlock * kBsrBlock > int64_t(INT32_MAX))
      throw VariantError(Status::unsupported, "cusparseScsr2bsr overflows 32-bit indexing past 2^31 block values");
    col_ = DeviceBuffer(size_t(blocks_) * sizeof(int));
    val_ = DeviceBuffer(size_t(blocks_) * kBsrBlock * kBsrBlock * sizeof(float));
  }
  void poison() override {
    BENCH_CUDA(cudaMemsetAsync(row_ptr_.data(), 0xFF, row_ptr_.size(), ctx_.stream));
    BENCH_CUDA(cudaMemsetAsync(col_.data(), 0xFF, col_.size(), ctx_.stream));
    BENCH_CUDA(cudaMemsetAsync(val_.data(), 0xFF, val_.size(), ctx_.stream));
  }
  void run() override {
    if (convert_->count(row_ptr_.as<int>()) != blocks_)
      throw VariantError(Status::wrong, "csr2bsrNnz returned a different block count on a repeated call");
    convert_->fill(val_.as<float>(), row_ptr_.as<const int>(), col_.as<int>());
  }
  CheckResult check() override {
    BENCH_CUDA(cudaStreamSynchronize(ctx_.stream));
    const HostBsr& want = mat_.bsr();
    if (want.blocks != blocks_) {
      CheckResult c;
      c.ok = false;
      c.message = "nnzb = " + std::to_string(blocks_) + ", want " + std::to_string(want.blocks);
      return c;
    }
    CheckResult c = compare_arrays("block row offsets", first_difference(download<int32_t>(row_ptr_.data(), want.row_ptr.size()), want.row_ptr));
    if (c.ok) c = compare_arrays("block columns", first_difference(download<int32_t>(col_.data(), want.col.size()), want.col));
    if (c.ok) c = compare_arrays("block values", first_difference(download<float>(val_.data(), want.val.size()), want.val));
    return c;
  }
  std::string note() const override { return "blocks=" + std::to_string(blocks_); }

 private:
  Context& ctx_;
  ConvertMatrix& mat_;
  std::unique_ptr<Csr2Bsr> convert_;
  DeviceBuffer row_ptr_, col_, val_;
  int64_t blocks_ = 0;
};

// sparsetc_matrix_convert of a device CSR (borrowed) into an owned device CSC with 32-bit indices:
// the library's GPU path (normalize, radix-sort transpose, export), allocations from its pool included.
class SparsetcCsr2Csc final : public Variant {
 public:
  SparsetcCsr2Csc(Context& ctx, ConvertMatrix& mat) : ctx_(ctx), mat_(mat) {}
  ~SparsetcCsr2Csc() override {
    sparsetc_matrix_destroy(out_);
    sparsetc_matrix_destroy(a_);
  }
  void setup() override {
    const DeviceCsr& a = mat_.csr;
    const sparsetc_status_t s = sparsetc_matrix_create_csr(
        ctx_.stc, &a_, a.rows, a.cols, a.nnz, a.row_ptr.data(), a.col.data(), a.val.data(), SPARSETC_INDEX_32,
        SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32, SPARSETC_MEMORY_DEVICE, SPARSETC_BORROW);
    if (s != SPARSETC_STATUS_SUCCESS) throw VariantError(Status::failed, sparsetc_get_status_name(s));
  }
  void poison() override {}
  void run() override {
    sparsetc_matrix_destroy(out_);
    out_ = nullptr;
    const sparsetc_status_t s = sparsetc_matrix_convert(ctx_.stc, a_, SPARSETC_FORMAT_CSC, SPARSETC_INDEX_32,
                                                        SPARSETC_INDEX_32, SPARSETC_BASE_ZERO, SPARSETC_VALUE_F32, &out_);
    if (s != SPARSETC_STATUS_SUCCESS) throw VariantError(Status::failed, sparsetc_get_status_name(s));
  }
  CheckResult check() override {
    BENCH_CUDA(cudaStreamSynchronize(ctx_.stream));
    void *p = nullptr, *c = nullptr, *v = nullptr;
    sparsetc_matrix_get_arrays(out_, &p, &c, &v);
    const HostCsr& t = mat_.transposed();
    const std::vector<int32_t> want_ptr(t.row_ptr.begin(), t.row_ptr.end());
    std::vector<float> want_val(t.val.size());
    for (size_t i = 0; i < want_val.size(); ++i) want_val[i] = float(t.val[i]);
    const int64_t nnz = mat_.csr.nnz;
    CheckResult r = compare_arrays("column offsets", first_difference(download<int32_t>(p, size_t(t.rows + 1)), want_ptr));
    if (r.ok) r = compare_arrays("row indices", first_difference(download<int32_t>(c, size_t(nnz)), t.col));
    if (r.ok) r = compare_arrays("values", first_difference(download<float>(v, size_t(nnz)), want_val));
    return r;
  }

 private:
  Context& ctx_;
  ConvertMatrix& mat_;
  sparsetc_matrix_t a_ = nullptr, out_ = nullptr;
};

// ------------------------------------------------------------------ the conversion table
using ConversionFactory = std::unique_ptr<Variant> (*)(Context&, ConvertMatrix&);

std::unique_ptr<Variant> make_cusparse_csr2csc(Context& ctx, ConvertMatrix& m) {
  return std::make_unique<CusparseCsr2Csc>(ctx, m);
}
std::unique_ptr<Variant> make_sparsetc_csr2csc(Context& ctx, ConvertMatrix& m) {
  return std::make_unique<SparsetcCsr2Csc>(ctx, m);
}
std::unique_ptr<Variant> make_cusparse_csr2bsr(Context& ctx, ConvertMatrix& m) {
  return std::make_unique<CusparseCsr2Bsr>(ctx, m);
}

struct Conversion {
  const char* op;        // the case: what is converted into what
  const char* variant;
  const char* provider;
  const char* alg;
  ConversionFactory make;  // nullptr: not available yet (reported as pending, no numbers)
  const char* pending;     // why it is pending
};

const Conversion kConversions[] = {
    {"csr2csc", "cusparse_csr2csc", "cusparse", "cusparseCsr2cscEx2/ALG1", &make_cusparse_csr2csc, nullptr},
    {"csr2bsr16", "cusparse_csr2bsr16", "cusparse", "cusparseXcsr2bsrNnz+cusparseScsr2bsr", &make_cusparse_csr2bsr,
     nullptr},
    {"csr2csc", "sparsetc_csr2csc", "sparsetc", "sparsetc_matrix_convert (device)", &make_sparsetc_csr2csc,
     nullptr},
    // HOOK(sparsetc GPU conversions): BCSR is converted on the device inside the engine but has no
    // C API entry of its own yet; give this entry a factory when it does.
    {"csr2bsr16", "sparsetc_csr2bsr16", "sparsetc", "", nullptr,
     "HOOK: sparsetc's GPU CSR->BSR conversion is not in the C API yet (suite_convert.cpp, kConversions)"},
};

// Bytes floor: the CSR read once, the output written once.
double floor_bytes(const HostCsr& a, const std::string& op, int64_t blocks) {
  const double csr = double(a.rows + 1) * 4 + double(a.nnz()) * 8;
  if (op == "csr2csc") return csr + double(a.cols + 1) * 4 + double(a.nnz()) * 8;
  const double mb = double((a.rows + kBsrBlock - 1) / kBsrBlock);
  return csr + (mb + 1) * 4 + double(blocks) * (4 + 4.0 * kBsrBlock * kBsrBlock);
}

}  // namespace

void run_convert_suite(Context& ctx, const MatrixInput& input) {
  const Options& o = ctx.options;
  const HostCsr& a = input.A;
  CaseClock clock(o.timeout_per_case_s);
  const size_t first = ctx.results.size();
  Result base = case_result(input);
  base.value_type = "f32";

  std::unique_ptr<ConvertMatrix> mat;
  try {
    mat = std::make_unique<ConvertMatrix>(a);
  } catch (const VariantError& e) {
    base.op = "csr2csc";
    base.variant = "(operands)";
    record_not_run(ctx, base, e.status(), e.what());
    return;
  }
  int64_t blocks = -1;  // BSR block count, for the csr2bsr floor
  for (const Conversion& conv : kConversions) {
    Result r = base;
    r.op = conv.op;
    r.variant = conv.variant;
    r.provider = conv.provider;
    r.format = r.op == "csr2csc" ? "csc" : "bsr16";
    r.alg = conv.alg;
    if (!variant_selected(o, r.variant)) continue;
    if (!conv.make) {
      record_not_run(ctx, r, Status::pending, conv.pending);
      continue;
    }
    if (clock.expired()) {
      record_not_run(ctx, r, Status::skipped, "--timeout-per-case reached");
      continue;
    }
    if (r.op == "csr2bsr16" && blocks < 0) blocks = mat->bsr().blocks;
    r.floor_bytes = floor_bytes(a, r.op, blocks);
    try {
      std::unique_ptr<Variant> v = conv.make(ctx, *mat);
      execute_variant(ctx, *v, r);
    } catch (const std::bad_alloc&) {
      record_not_run(ctx, r, Status::failed, "host out of memory");
    }
  }
  report_case(ctx.results, first, clock);
}

}  // namespace bench
