// SpMM AUTO's decision list (engine/spmm_select.hpp) on hand-made features: each rule fires at its
// threshold and not just below it, in its order, and the reason names the rule and its numbers.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "engine/dense.hpp"
#include "engine/matrix.hpp"
#include "engine/spmm_plan.hpp"
#include "engine/spmm_select.hpp"
#include "formats/sparse.hpp"

namespace sparsetc::detail {
namespace {

// A regular matrix of `rows` rows of `mean` entries (longest row `max`), no empty row; SSF 1.
SpmmFeatures regular(sparsetc_value_type_t type, int64_t n, double mean, int64_t max, int64_t rows = 10000) {
  SpmmFeatures f;
  f.rows = f.cols = rows;
  f.nnz = int64_t(mean * double(rows));
  f.nonempty_rows = rows;
  f.row_length_mean = mean;
  f.row_length_max = max;
  f.row_length_std = 1;
  f.ssf = 1;
  f.n = n;
  f.value_type = type;
  return f;
}

bool says(const SpmmChoice& c, const std::string& text) { return c.reason.find(text) != std::string::npos; }

TEST(SpmmSelect, TensorCoresFromTheirFillThreshold) {
  SpmmFeatures f = regular(SPARSETC_VALUE_F16, 128, 40, 150);
  f.tensor_core_fill = 0.2;
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::TensorCores);
  EXPECT_TRUE(says(c, "rule 1 (tensor cores): block fill 0.2 >= 0.2")) << c.reason;
  f.tensor_core_fill = 0.199;
  EXPECT_NE(select_spmm(f).path, SpmmPath::TensorCores);
  // Wide B: from 7%.
  f.n = 512;
  f.tensor_core_fill = 0.07;
  EXPECT_EQ(select_spmm(f).path, SpmmPath::TensorCores);
  f.tensor_core_fill = 0.069;
  EXPECT_NE(select_spmm(f).path, SpmmPath::TensorCores);
  // bf16 is the half class too; an unknown fill never takes the tensor cores.
  f.value_type = SPARSETC_VALUE_BF16;
  f.tensor_core_fill = 0.5;
  EXPECT_EQ(select_spmm(f).path, SpmmPath::TensorCores);
  f.tensor_core_fill = -1;
  EXPECT_NE(select_spmm(f).path, SpmmPath::TensorCores);
}

TEST(SpmmSelect, TensorCorePrefilterAgreesWithRuleOne) {
  for (int64_t n : {1, 8, 16, 17, 32, 64, 65, 128, 256, 257, 512, 4096}) {
    for (double fill : {0.01, 0.069, 0.07, 0.1, 0.199, 0.2, 0.5, 1.0}) {
      SpmmFeatures f = regular(SPARSETC_VALUE_F16, n, 40, 150);
      f.tensor_core_fill = fill;
      EXPECT_EQ(tensor_cores_predicted_faster(fill, n), select_spmm(f).path == SpmmPath::TensorCores)
          << "fill " << fill << ", N " << n;
      EXPECT_EQ(tensor_cores_predicted_faster(fill, n), fill >= tensor_core_fill_threshold(n));
    }
  }
}

TEST(SpmmSelect, ExactFp32NeverTakesTheTensorCores) {
  for (sparsetc_value_type_t type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F64}) {
    SpmmFeatures f = regular(type, 512, 40, 150);
    f.tensor_core_fill = 1.0;
    EXPECT_NE(select_spmm(f).path, SpmmPath::TensorCores);
  }
}

TEST(SpmmSelect, TiledDcsrFromTheSsfThreshold) {
  // fp32 at N = 512 (rows of 140 keep rule 4 out: mean <= 128 there).
  SpmmFeatures f = regular(SPARSETC_VALUE_F32, 512, 140, 170000);
  f.ssf = 2000;
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::TiledDcsr);
  EXPECT_TRUE(says(c, "rule 2 (B-stationary): SSF 2000 >= 2000")) << c.reason;
  f.ssf = 1999.5;
  EXPECT_NE(select_spmm(f).path, SpmmPath::TiledDcsr);
  // The tensor cores come first (half inputs); other N and half inputs never take the tiled kernel.
  SpmmFeatures h = regular(SPARSETC_VALUE_F16, 512, 140, 170000);
  h.ssf = 5000;
  h.tensor_core_fill = 0.9;
  EXPECT_EQ(select_spmm(h).path, SpmmPath::TensorCores);
  for (int64_t n : {8, 32, 128, 512}) {
    SpmmFeatures g = regular(SPARSETC_VALUE_F16, n, 140, 170000);
    g.ssf = 1e9;
    EXPECT_NE(select_spmm(g).path, SpmmPath::TiledDcsr) << "N " << n;
  }
  for (int64_t n : {8, 32, 128}) {
    SpmmFeatures g = regular(SPARSETC_VALUE_F32, n, 140, 170000);
    g.ssf = 1e9;
    EXPECT_NE(select_spmm(g).path, SpmmPath::TiledDcsr) << "N " << n;
  }
}

// f selects our CSR kernel; one step past the edge (`past`), cuSPARSE.
template <typename Past>
void expect_kernel_up_to_edge(SpmmFeatures f, Past past, const char* where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(select_spmm(f).path, SpmmPath::Csr);
  past(f);
  EXPECT_EQ(select_spmm(f).path, SpmmPath::Cusparse);
}
void longest_row(SpmmFeatures& f, int64_t n) { f.row_length_max = n; }
void mean_row(SpmmFeatures& f, double mean) { f.row_length_mean = mean; }

TEST(SpmmSelect, SkewedRowsGoToOurKernel) {
  // f16, N = 32: the longest row from 500 (mean 300 keeps rule 4 out).
  SpmmFeatures f = regular(SPARSETC_VALUE_F16, 32, 300, 500);
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Csr);
  EXPECT_TRUE(says(c, "rule 3 (skewed rows): longest row 500 >= 500")) << c.reason;
  f.row_length_max = 499;
  c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_EQ(c.cusparse_algorithm, CusparseCsrAlgorithm::Alg3);
  // f32, N = 32: from 500 (a mean of 50 keeps rule 4 out).
  expect_kernel_up_to_edge(regular(SPARSETC_VALUE_F32, 32, 50, 500), [](SpmmFeatures& g) { longest_row(g, 499); },
                           "f32, N = 32");
  // N = 8: rule 4 takes every matrix, whatever its rows.
  for (sparsetc_value_type_t type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F16}) {
    c = select_spmm(regular(type, 8, 700, 9000));
    EXPECT_EQ(c.path, SpmmPath::Csr);
    EXPECT_TRUE(says(c, "rule 4 (row length): mean row 700 <= inf")) << c.reason;
  }
}

TEST(SpmmSelect, ShortRowsGoToOurKernel) {
  SpmmFeatures f = regular(SPARSETC_VALUE_F32, 32, 8, 20);
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Csr);
  EXPECT_TRUE(says(c, "rule 4 (row length): mean row 8 <= 8")) << c.reason;
  f.row_length_mean = 8.01;
  c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_TRUE(says(c, "rule 5 (cuSPARSE CSR_ALG3)")) << c.reason;
  // f32: mean rows up to 256 at N = 128 and 512.
  expect_kernel_up_to_edge(regular(SPARSETC_VALUE_F32, 128, 256, 300), [](SpmmFeatures& g) { mean_row(g, 257); },
                           "f32, N = 128");
  expect_kernel_up_to_edge(regular(SPARSETC_VALUE_F32, 512, 256, 300), [](SpmmFeatures& g) { mean_row(g, 257); },
                           "f32, N = 512");
  // f16: up to 256 / 32 entries at N = 32 / 128; at N = 512 any (rail582: mean 691, longest 2001).
  expect_kernel_up_to_edge(regular(SPARSETC_VALUE_F16, 32, 256, 300), [](SpmmFeatures& g) { mean_row(g, 257); },
                           "f16, N = 32");
  c = select_spmm(regular(SPARSETC_VALUE_F16, 512, 691, 2001));
  EXPECT_EQ(c.path, SpmmPath::Csr);
  EXPECT_TRUE(says(c, "rule 4 (row length): mean row 691 <= inf")) << c.reason;
  expect_kernel_up_to_edge(regular(SPARSETC_VALUE_F16, 128, 32, 40), [](SpmmFeatures& g) { mean_row(g, 32.5); },
                           "f16, N = 128");
}

// Rule 5 was measured with cuSPARSE's CSR_ALG2/ALG3; where they cannot run (a COO or CSC A, op(A) =
// A^T, column-major or unaligned B or C), cuSPARSE's default algorithm would, so AUTO keeps its own
// kernel (the DCSR one when rows are empty) and says why.
TEST(SpmmSelect, CusparseOnlyWhereItsCsrAlgorithmsRun) {
  SpmmFeatures f = regular(SPARSETC_VALUE_F16, 128, 40, 60);
  ASSERT_EQ(select_spmm(f).path, SpmmPath::Cusparse);
  f.cusparse_csr_refusal = "B or C is column-major";
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Csr);
  EXPECT_TRUE(says(c, "rule 5 (cuSPARSE CSR_ALG3) passed over: that algorithm does not run where B or C is "
                      "column-major, N 128"))
      << c.reason;
  f.nonempty_rows = f.rows / 2;
  EXPECT_EQ(select_spmm(f).path, SpmmPath::Dcsr);
  // Earlier rules are unaffected.
  f = regular(SPARSETC_VALUE_F32, 32, 8, 20);
  f.cusparse_csr_refusal = "A is not CSR";
  c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Csr);
  EXPECT_TRUE(says(c, "rule 4")) << c.reason;
}

// What the features' refusal says (cusparse_csr_algorithms_refusal, on the problem the plan was
// made for): nothing for a CSR A of 32/32 or 64/64 offsets and indices with row-major, aligned B
// and C; otherwise the first thing cuSPARSE's CSR_ALG2/ALG3 cannot take, mixed widths included
// (cusparseCreateCsr refuses 64-bit offsets with 32-bit indices: found by the GPU fuzz test).
TEST(SpmmSelect, CusparseRefusalNamesWhatItsCsrAlgorithmsCannotTake) {
  CsrMatrix<double> csr;
  csr.rows = csr.cols = 3;
  csr.row_ptr = {0, 1, 2, 3};
  csr.col_idx = {0, 1, 2};
  csr.values = {1.0, 2.0, 3.0};
  const auto matrix = [&](sparsetc_index_type_t offsets, sparsetc_index_type_t indices) {
    return make_host_matrix(csr, offsets, indices, SPARSETC_VALUE_F64);
  };
  const auto problem = [](sparsetc_matrix_s& A) {
    SpmmProblem p;
    p.A = &A;
    p.B.rows = p.B.cols = p.B.ld = p.C.rows = p.C.cols = p.C.ld = 3;
    p.B.value_type = p.C.value_type = SPARSETC_VALUE_F64;
    return p;
  };
  for (auto [offsets, indices] : {std::pair{SPARSETC_INDEX_32, SPARSETC_INDEX_32},
                                  std::pair{SPARSETC_INDEX_64, SPARSETC_INDEX_64}}) {
    const auto A = matrix(offsets, indices);
    SpmmProblem p = problem(*A);
    EXPECT_EQ(cusparse_csr_algorithms_refusal(p), "");
    p.op = SPARSETC_OP_TRANSPOSE;
    EXPECT_EQ(cusparse_csr_algorithms_refusal(p), "op(A) = A^T");
    p = problem(*A);
    p.C.order = SPARSETC_ORDER_COL;
    EXPECT_EQ(cusparse_csr_algorithms_refusal(p), "B or C is column-major");
    p = problem(*A);
    p.b_rows_aligned = false;
    EXPECT_EQ(cusparse_csr_algorithms_refusal(p), "the rows of B or C are not 16-byte aligned");
  }
  for (auto [offsets, indices] : {std::pair{SPARSETC_INDEX_64, SPARSETC_INDEX_32},
                                  std::pair{SPARSETC_INDEX_32, SPARSETC_INDEX_64}}) {
    const auto A = matrix(offsets, indices);
    EXPECT_EQ(cusparse_csr_algorithms_refusal(problem(*A)), "A's offsets and indices differ in width");
  }
  const auto A = matrix(SPARSETC_INDEX_32, SPARSETC_INDEX_32);
  A->layout.format = SPARSETC_FORMAT_CSC;  // (the refusal reads the layout only)
  EXPECT_EQ(cusparse_csr_algorithms_refusal(problem(*A)), "A is not CSR");
}

TEST(SpmmSelect, NBucketEdges) {
  // f32 with rows of 10: kernel in bucket 8 (mean <= 256), cuSPARSE in bucket 32 (mean <= 8).
  EXPECT_EQ(select_spmm(regular(SPARSETC_VALUE_F32, 16, 10, 12)).path, SpmmPath::Csr);
  SpmmChoice c = select_spmm(regular(SPARSETC_VALUE_F32, 17, 10, 12));
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_TRUE(says(c, "N 17 (bucket 32)")) << c.reason;
  EXPECT_EQ(select_spmm(regular(SPARSETC_VALUE_F32, 1, 10, 12)).path, SpmmPath::Csr);
}

TEST(SpmmSelect, DcsrWhenManyRowsAreEmpty) {
  SpmmFeatures f = regular(SPARSETC_VALUE_F32, 8, 4, 20, 100);
  f.nonempty_rows = 75;
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Dcsr);
  EXPECT_TRUE(says(c, "DCSR: 0.25 of the rows empty")) << c.reason;
  f.nonempty_rows = 76;
  EXPECT_EQ(select_spmm(f).path, SpmmPath::Csr);
  f.nonempty_rows = -1;  // unknown
  EXPECT_EQ(select_spmm(f).path, SpmmPath::Csr);
}

TEST(SpmmSelect, CusparseAlgorithmBySkewAndN) {
  // f16 below N = 512: ALG3 unless the longest row reaches 500 (ALG3 collapses on skewed rows).
  SpmmFeatures f = regular(SPARSETC_VALUE_F16, 128, 40, 499);
  EXPECT_EQ(select_spmm(f).cusparse_algorithm, CusparseCsrAlgorithm::Alg3);
  f.row_length_max = 500;
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_EQ(c.cusparse_algorithm, CusparseCsrAlgorithm::Alg2);
  EXPECT_TRUE(says(c, "ALG3 collapses on skewed rows")) << c.reason;
  // f32: from 700; ALG3 up to N = 256 below it, ALG2 beyond whatever the rows.
  f = regular(SPARSETC_VALUE_F32, 32, 50, 699);
  EXPECT_EQ(select_cusparse_algorithm(f), CusparseCsrAlgorithm::Alg3);
  f.row_length_max = 700;
  EXPECT_EQ(select_cusparse_algorithm(f), CusparseCsrAlgorithm::Alg2);
  f = regular(SPARSETC_VALUE_F32, 128, 300, 310);
  c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_EQ(c.cusparse_algorithm, CusparseCsrAlgorithm::Alg3);
  f = regular(SPARSETC_VALUE_F32, 257, 300, 310);
  c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_EQ(c.cusparse_algorithm, CusparseCsrAlgorithm::Alg2);
}

TEST(SpmmSelect, UnknownRowStatisticsGoToCusparseByN) {
  SpmmFeatures f;
  f.n = 32;
  f.value_type = SPARSETC_VALUE_F32;
  SpmmChoice c = select_spmm(f);
  EXPECT_EQ(c.path, SpmmPath::Cusparse);
  EXPECT_EQ(c.cusparse_algorithm, CusparseCsrAlgorithm::Alg3);
  EXPECT_TRUE(says(c, "no row statistics")) << c.reason;
  f.n = 4096;
  EXPECT_EQ(select_spmm(f).cusparse_algorithm, CusparseCsrAlgorithm::Alg2);
  EXPECT_NE(select_spmm(f).path, SpmmPath::VbrCublas);  // the VBR slot stays closed until measured
}

TEST(SpmmSelect, EveryReasonNamesItsPathRule) {
  for (sparsetc_value_type_t type : {SPARSETC_VALUE_F32, SPARSETC_VALUE_F16}) {
    for (int64_t n : {8, 32, 128, 512}) {
      for (double mean : {2.0, 10.0, 300.0}) {
        const SpmmChoice c = select_spmm(regular(type, n, mean, int64_t(mean * 3)));
        EXPECT_EQ(c.reason.rfind("rule ", 0), 0u) << c.reason;
      }
    }
  }
}

}  // namespace
}  // namespace sparsetc::detail
