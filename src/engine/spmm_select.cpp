// The decision list of SpMM AUTO. Thresholds: bench/scripts/fit_spmm_selector.py on the H200 runs
// of bench/data/spmm_paths_h200.csv (30 real matrices, N = 8, 32, 128, 512, f32 and f16, every
// path timed in one run), trained on 15 matrices and validated on the 15 others (its report has
// the accuracy table); rules 3-5 refitted on bench/data/spmm_kernel_paths_h200.csv (session 32:
// the CSR kernel with its new schedule and cuSPARSE's CSR algorithms, same inputs, one run).
// Re-fit when a kernel changes: the script prints these tables.
#include "engine/spmm_select.hpp"

#include <limits>

#include "core/error.hpp"

namespace sparsetc::detail {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();  // a ">=" rule that never fires
constexpr double kNone = -1.0;                                       // a "<=" rule that never fires
constexpr double kAlways = std::numeric_limits<double>::infinity();  // a "<=" rule that always fires

// Rows: type class (0: f32/f64 inputs, 1: f16/bf16 inputs). Columns: N bucket (8, 32, 128, 512).
using Table = double[2][4];

// 1. Tensor cores from this block fill after 1-SA. One value up to N = 128, one beyond: below a
//    fifth of the block filled the f16 kernel loses to cuSPARSE's ALG3 by 1.4-3x at N <= 128
//    (Dubcova1 0.057, bcsstk18 0.058, lp_osa_30 0.10); at N = 512 it wins from 7% (stokes64,
//    nasa4704, lp_osa_60). The f32 class never reaches here (exact fp32 has no tensor-core path;
//    tf32 and f64 plans, taken only when the compute type asks, use the half-precision row).
constexpr Table kTensorCoreFill = {{kNever, kNever, kNever, kNever}, {0.2, 0.2, 0.2, 0.07}};
// 2. B-stationary (tiled DCSR) from this SSF (Eq. 2 of the DCSR paper). The paper's rule, refitted:
//    on the H200 the tiled kernel is the fastest path only on LP matrices with rows of 10^5 entries
//    (SSF in the thousands); after the f16 row kernel's packed loads (second round) that is left
//    at fp32 and N = 512 alone. Elsewhere never.
constexpr Table kTiledSsf = {{kNever, kNever, kNever, 2000}, {kNever, kNever, kNever, kNever}};
// 3. Our kernel when the longest row reaches this: cuSPARSE's CSR_ALG3 collapses on skewed rows
//    (f16 lp_osa_60: 15.6 ms against 0.12 ms with ALG2) and ALG2 is slow at narrow B. At N = 8 rule
//    4 takes every matrix.
constexpr Table kSkewedRows = {{kNever, 500, 700, kNever}, {kNever, 500, 700, kNever}};
// 4. Our kernel when the mean row is at most this long. Refitted in session 33 after the kernel's
//    leaner inner loop (consecutive entries per lane, no per-entry branches, lane columns in
//    16-byte pieces) made it another 1.05-1.15x faster: at N = 8 it beats cuSPARSE on every matrix
//    (rail582's rows of 691 entries too); at N = 128 and 512 on all rows of up to a few hundred
//    entries but ca-AstroPh's (f32 N = 128: 0.75x then, 0.84x in session 35; left to the geometric
//    mean); at N = 32 cuSPARSE's ALG3 keeps the regular f32 rows of 10-70 entries (FEM), and at f16
//    N = 128 rows from 32. At f16 N = 512 the kernel beats the best cuSPARSE algorithm on all 33
//    inputs of bench/data/spmm_paths_f16_h200_round11.csv (from 1.17x, ca-AstroPh), rail582's rows
//    of 691 entries too (1.44-1.50x; session 42): every matrix (fp32 rail582 stays with cuSPARSE,
//    0.96x).
constexpr Table kKernelMeanRow = {{kAlways, 8, 256, 256}, {kAlways, 256, 32, kAlways}};
// 5. cuSPARSE: CSR_ALG2 when the longest row reaches this (per type class), else per N bucket.
constexpr double kAlg3SkewedRows[2] = {700, 500};
constexpr bool kAlg2ByN[2][4] = {{false, false, false, true}, {false, false, false, true}};
// Our kernel over the non-empty rows only (DCSR) when this fraction of the rows is empty. Not
// identifiable from the data (the two kernels are within 10% on every timed matrix); the DCSR
// paper's reason to skip empty rows.
constexpr double kDcsrEmptyRows = 0.25;
// 0. The VBR-cuBLAS slot (issue 6: wide B, N = 2048-8192): not taken until it is measured.
constexpr int64_t kVbrCublasMinN = std::numeric_limits<int64_t>::max();

int type_class(sparsetc_value_type_t t) { return t == SPARSETC_VALUE_F16 || t == SPARSETC_VALUE_BF16 ? 1 : 0; }
const char* type_class_name(int c) { return c == 1 ? "f16/bf16" : "f32/f64"; }

// The bucket of the measured N nearest in log scale.
int n_bucket(int64_t n) { return n <= 16 ? 0 : n <= 64 ? 1 : n <= 256 ? 2 : 3; }
int64_t bucket_n(int b) { return int64_t(8) << (2 * b); }

std::string where(const SpmmFeatures& f) {
  return str(", N ", f.n, " (bucket ", bucket_n(n_bucket(f.n)), "), ", type_class_name(type_class(f.value_type)));
}

bool has_row_stats(const SpmmFeatures& f) { return f.row_length_max >= 0 && f.row_length_mean >= 0; }

// Our C-stationary kernel: over the non-empty rows when many are empty.
SpmmPath c_stationary(const SpmmFeatures& f, std::string& why) {
  if (f.rows > 0 && f.nonempty_rows >= 0) {
    const double empty = double(f.rows - f.nonempty_rows) / double(f.rows);
    if (empty >= kDcsrEmptyRows) {
      why += str("; DCSR: ", empty, " of the rows empty >= ", kDcsrEmptyRows);
      return SpmmPath::Dcsr;
    }
  }
  return SpmmPath::Csr;
}

}  // namespace

double tensor_core_fill_threshold(int64_t n) { return kTensorCoreFill[1][n_bucket(n)]; }
bool tensor_cores_predicted_faster(double fill, int64_t n) { return fill >= tensor_core_fill_threshold(n); }

CusparseCsrAlgorithm select_cusparse_algorithm(const SpmmFeatures& f) {
  const int t = type_class(f.value_type), b = n_bucket(f.n);
  if (f.row_length_max >= 0 && double(f.row_length_max) >= kAlg3SkewedRows[t]) return CusparseCsrAlgorithm::Alg2;
  return kAlg2ByN[t][b] ? CusparseCsrAlgorithm::Alg2 : CusparseCsrAlgorithm::Alg3;
}

SpmmChoice select_spmm(const SpmmFeatures& f) {
  const int t = type_class(f.value_type), b = n_bucket(f.n);
  SpmmChoice c;
  c.cusparse_algorithm = select_cusparse_algorithm(f);
  if (f.n >= kVbrCublasMinN) {
    c.path = SpmmPath::VbrCublas;
    c.reason = str("rule 0 (VBR-cuBLAS): N ", f.n, " >= ", kVbrCublasMinN);
    return c;
  }
  if (f.tensor_core_fill >= 0 && f.tensor_core_fill >= kTensorCoreFill[t][b]) {
    c.path = SpmmPath::TensorCores;
    c.reason = str("rule 1 (tensor cores): block fill ", f.tensor_core_fill, " >= ", kTensorCoreFill[t][b], where(f));
    return c;
  }
  if (f.ssf >= 0 && f.ssf >= kTiledSsf[t][b]) {
    c.path = SpmmPath::TiledDcsr;
    c.reason = str("rule 2 (B-stationary): SSF ", f.ssf, " >= ", kTiledSsf[t][b], where(f));
    return c;
  }
  if (has_row_stats(f) && double(f.row_length_max) >= kSkewedRows[t][b]) {
    c.reason = str("rule 3 (skewed rows): longest row ", f.row_length_max, " >= ", kSkewedRows[t][b], " (mean ",
                   f.row_length_mean, ")", where(f));
    c.path = c_stationary(f, c.reason);
    return c;
  }
  if (has_row_stats(f) && f.row_length_mean <= kKernelMeanRow[t][b]) {
    c.reason = str("rule 4 (row length): mean row ", f.row_length_mean, " <= ", kKernelMeanRow[t][b], where(f));
    c.path = c_stationary(f, c.reason);
    return c;
  }
  if (!f.cusparse_csr_refusal.empty()) {
    c.reason = str("rule 5 (cuSPARSE ", cusparse_algorithm_name(c.cusparse_algorithm),
                   ") passed over: that algorithm does not run where ", f.cusparse_csr_refusal, where(f));
    c.path = c_stationary(f, c.reason);
    return c;
  }
  c.path = SpmmPath::Cusparse;
  const bool skewed = f.row_length_max >= 0 && double(f.row_length_max) >= kAlg3SkewedRows[t];
  c.reason = str("rule 5 (cuSPARSE ", cusparse_algorithm_name(c.cusparse_algorithm), "): ",
                 has_row_stats(f) ? str("mean row ", f.row_length_mean, ", longest ", f.row_length_max) : "no row statistics",
                 skewed ? str(" >= ", kAlg3SkewedRows[t], " (ALG3 collapses on skewed rows)") : std::string(), where(f));
  return c;
}

const char* path_name(SpmmPath path) {
  switch (path) {
    case SpmmPath::TensorCores: return "tensor cores";
    case SpmmPath::Csr: return "CSR kernel";
    case SpmmPath::Dcsr: return "DCSR kernel";
    case SpmmPath::TiledDcsr: return "tiled DCSR kernel";
    case SpmmPath::Cusparse: return "cuSPARSE";
    default: return "VBR-cuBLAS";
  }
}

const char* cusparse_algorithm_name(CusparseCsrAlgorithm algorithm) {
  switch (algorithm) {
    case CusparseCsrAlgorithm::Alg1: return "CSR_ALG1";
    case CusparseCsrAlgorithm::Alg2: return "CSR_ALG2";
    case CusparseCsrAlgorithm::Alg3: return "CSR_ALG3";
    default: return "default";
  }
}

}  // namespace sparsetc::detail
