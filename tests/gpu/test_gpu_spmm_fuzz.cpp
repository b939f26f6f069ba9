// Randomised SpMM through the C API on the GPU backend: each round draws a structure (uniform,
// power-law rows, rows longer than a CTA's share, band, dense blocks with scrambled rows, one dense
// column, nearly empty, empty), sizes (odd, 1, sometimes 0), N, value types (f64, f32, f16, bf16;
// C in the input type or f32), compute type (64F, 32F, TF32, default), A's format (CSR, CSC, COO),
// index widths and base, orders of B and C (each either), leading dimensions, alpha and beta, op(A),
// the caller's workspace or the library's, and A's rows as they are, permuted or reordered by 1-SA
// (the answer is in A's own row order either way); then runs every device algorithm on it, twice
// (new values through sparsetc_matrix_set_values before the second run, A's own rows only), and
// checks each element of C against the float64 reference over the inputs as the library sees them
// (rounded to their storage types): NaN-poisoned C where beta = 0 (every element written), NaN
// padding in B (nothing read past N or K) and a sentinel in C's padding (nothing written there);
// sometimes B and C start an element or three into their buffers, off 16-byte boundaries.
//
// Bound per element: the accumulation's (2L + 8) unit roundoffs (L entries in the output row; twice
// the textbook gamma for tensor cores, which truncate) and at least 1e-5 for fp32 accumulation,
// plus 2^-9 for TF32's rounded inputs, times sum |alpha a b| + |beta c|, plus C's own rounding.
// A dropped or doubled entry moves its element by about 1/L of that sum, far above the bound.
//
// cuSPARSE requested by name is held to C's precision where C is f16/bf16, for its default
// algorithm sums in it. AUTO, CSR and DCSR must take every case; the other algorithms may refuse
// with NOT_SUPPORTED and a message (counted in the summary). The same cases run in host memory on
// the CPU backend (AUTO and CPU), where no device is needed. SPARSETC_FUZZ_ROUNDS sets the number of
// rounds (default 40 on the device, 25 on the host); the seed is printed, and SPARSETC_TEST_SEED
// replays a run.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

using namespace sparsetc_test;

namespace {

struct FuzzCase {
  int64_t m = 0, k = 0, n = 0;
  sparsetc_operation_t op = SPARSETC_OP_NON_TRANSPOSE;
  std::string structure;
  sparsetc_value_type_t in = SPARSETC_VALUE_F32, c_type = SPARSETC_VALUE_F32;
  sparsetc_compute_type_t compute = SPARSETC_COMPUTE_DEFAULT;
  SparseLayout layout;
  sparsetc_order_t b_order = SPARSETC_ORDER_ROW, c_order = SPARSETC_ORDER_ROW;
  int64_t ldb = 0, ldc = 0;
  // B and C start this many elements into their buffers (an odd count leaves them off 16-byte
  // boundaries, as a column slice of a larger matrix would).
  int64_t b_shift = 0, c_shift = 0;
  double alpha = 1, beta = 0;
  bool user_workspace = false;
  // A as multiplied: itself, its rows permuted at random (sparsetc_matrix_permute_rows), or reordered
  // by 1-SA (sparsetc_matrix_reorder); a multiply must answer in A's own row order either way.
  enum class Rows { own, permuted, one_sa } rows = Rows::own;
};

std::string describe(const FuzzCase& c, int64_t nnz) {
  std::ostringstream s;
  static const char* computes[] = {"default", "32F", "64F", "TF32"};
  s << c.m << "x" << c.k << " N=" << c.n << (c.op == SPARSETC_OP_TRANSPOSE ? " op=T" : "") << " (" << c.structure
    << ", " << nnz << " entries) " << type_name(c.in) << "->" << type_name(c.c_type) << " compute "
    << computes[c.compute] << ", A " << describe(c.layout) << ", B "
    << (c.b_order == SPARSETC_ORDER_ROW ? "row" : "col") << " ld " << c.ldb << ", C "
    << (c.c_order == SPARSETC_ORDER_ROW ? "row" : "col") << " ld " << c.ldc
    << (c.b_shift || c.c_shift ? ", shifted by " + std::to_string(c.b_shift) + "/" + std::to_string(c.c_shift) : "")
    << ", alpha " << c.alpha << " beta "
    << c.beta << (c.user_workspace ? ", caller's workspace" : "")
    << (c.rows == FuzzCase::Rows::permuted ? ", A's rows permuted"
        : c.rows == FuzzCase::Rows::one_sa ? ", A reordered by 1-SA"
                                            : "");
  return s.str();
}

FuzzCase draw_case(Draw& d) {
  FuzzCase c;
  auto size = [&] {
    if (d.chance(0.04)) return int64_t(0);
    if (d.chance(0.08)) return int64_t(1);
    return d.chance(0.5) ? d.between(2, 300) : d.between(300, 2500);
  };
  c.m = size();
  c.k = size();
  c.n = d.chance(0.03) ? 0
                       : d.pick<int64_t>({1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 40, 63, 64, 65, 100, 127, 128,
                                          129, 200, 256, 300, 513});
  c.op = d.chance(0.25) ? SPARSETC_OP_TRANSPOSE : SPARSETC_OP_NON_TRANSPOSE;
  c.in = d.pick({SPARSETC_VALUE_F64, SPARSETC_VALUE_F32, SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16});
  if (c.in == SPARSETC_VALUE_F64) {
    c.c_type = SPARSETC_VALUE_F64;
    c.compute = d.pick({SPARSETC_COMPUTE_DEFAULT, SPARSETC_COMPUTE_64F});
  } else if (c.in == SPARSETC_VALUE_F32) {
    c.c_type = SPARSETC_VALUE_F32;
    c.compute = d.pick({SPARSETC_COMPUTE_DEFAULT, SPARSETC_COMPUTE_32F, SPARSETC_COMPUTE_TF32});
  } else {
    c.c_type = d.chance(0.5) ? SPARSETC_VALUE_F32 : c.in;
    c.compute = d.pick({SPARSETC_COMPUTE_DEFAULT, SPARSETC_COMPUTE_32F});
  }
  c.layout = draw_layout(d);
  c.b_order = d.pick({SPARSETC_ORDER_ROW, SPARSETC_ORDER_COL});
  c.c_order = d.chance(0.8) ? c.b_order : (c.b_order == SPARSETC_ORDER_ROW ? SPARSETC_ORDER_COL : SPARSETC_ORDER_ROW);
  c.alpha = d.pick({1.0, -1.5, 0.5, 0.0});
  c.beta = d.pick({0.0, 0.0, 1.0, -0.5});
  c.user_workspace = d.chance(0.5);
  if (d.chance(0.15)) c.rows = d.chance(0.5) ? FuzzCase::Rows::permuted : FuzzCase::Rows::one_sa;
  return c;
}

// Keeps the float64 reference's work (entries x N) bounded: wide B over many entries gets a
// narrower N. Then the leading dimensions, some padded past the rows or columns.
void finish_case(Draw& d, FuzzCase& c, int64_t entries) {
  const int64_t budget = 4000000;
  if (entries * c.n > budget) c.n = std::max<int64_t>(1, budget / entries);
  auto pad = [&] { return d.chance(0.5) ? int64_t(0) : d.pick<int64_t>({1, 3, 8, 13}); };
  c.ldb = std::max<int64_t>(1, (c.b_order == SPARSETC_ORDER_ROW ? c.n : c.k) + pad());
  c.ldc = std::max<int64_t>(1, (c.c_order == SPARSETC_ORDER_ROW ? c.n : c.m) + pad());
  if (d.chance(0.2)) {
    c.b_shift = d.pick<int64_t>({0, 1, 3});
    c.c_shift = d.pick<int64_t>({0, 1, 3});
  }
}

// Everything of one round on the device, and the check of C against the reference.
class FuzzRound {
 public:
  FuzzRound(sparsetc_handle_t h, const FuzzCase& c, const Triplets& stored, sparsetc_memory_t memory, Draw& d)
      : h_(h), c_(c), memory_(memory), a_(h, stored, c.layout, c.in, memory, d) {
    // B with NaN padding; C with a sentinel in its padding, NaN where beta = 0 (it must not be read).
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> b_store(size_t(c_.b_shift + c_.ldb * (c_.b_order == SPARSETC_ORDER_ROW ? c_.k : c_.n)), nan);
    b_.assign(size_t(c_.k * c_.n), 0.0);
    for (int64_t i = 0; i < c_.k; ++i)
      for (int64_t j = 0; j < c_.n; ++j) b_store[c_.b_shift + at(c_.b_order, i, j, c_.ldb)] = d.value();
    const std::vector<uint8_t> b_bytes = pack(b_store, c_.in);
    const std::vector<double> b_round = unpack(b_bytes, c_.in);
    for (int64_t i = 0; i < c_.k; ++i)
      for (int64_t j = 0; j < c_.n; ++j)
        b_[size_t(i * c_.n + j)] = b_round[c_.b_shift + at(c_.b_order, i, j, c_.ldb)];
    std::vector<double> c_store(size_t(c_.c_shift + c_.ldc * (c_.c_order == SPARSETC_ORDER_ROW ? c_.m : c_.n)),
                                kSentinel);
    for (int64_t i = 0; i < c_.m; ++i)
      for (int64_t j = 0; j < c_.n; ++j)
        c_store[c_.c_shift + at(c_.c_order, i, j, c_.ldc)] = c_.beta == 0 ? nan : d.value();
    c_initial_ = pack(c_store, c_.c_type);
    c0_ = unpack(c_initial_, c_.c_type);
    bd_ = std::make_unique<Buffer>(b_bytes, memory);
    cd_ = std::make_unique<Buffer>(c_initial_, memory);
    EXPECT_EQ(sparsetc_dense_create(h, &B_, c_.k, c_.n, c_.ldb, bd_->at(c_.b_shift * int64_t(type_size(c_.in))),
                                    c_.in, c_.b_order, memory),
              SPARSETC_STATUS_SUCCESS)
        << last_error(h);
    EXPECT_EQ(sparsetc_dense_create(h, &C_, c_.m, c_.n, c_.ldc, cd_->at(c_.c_shift * int64_t(type_size(c_.c_type))),
                                    c_.c_type, c_.c_order, memory),
              SPARSETC_STATUS_SUCCESS)
        << last_error(h);
    if (c_.rows == FuzzCase::Rows::permuted) {
      std::vector<int64_t> permutation(size_t(stored.rows));
      std::iota(permutation.begin(), permutation.end(), int64_t(0));
      std::shuffle(permutation.begin(), permutation.end(), d.engine());
      EXPECT_EQ(sparsetc_matrix_permute_rows(h, a_.get(), permutation.data(), &reordered_), SPARSETC_STATUS_SUCCESS)
          << last_error(h);
    } else if (c_.rows == FuzzCase::Rows::one_sa) {
      EXPECT_EQ(sparsetc_matrix_reorder(h, a_.get(), SPARSETC_REORDER_ONE_SA, nullptr, &reordered_),
                SPARSETC_STATUS_SUCCESS)
          << last_error(h);
    }
  }
  ~FuzzRound() {
    sparsetc_matrix_destroy(reordered_);
    sparsetc_dense_destroy(B_);
    sparsetc_dense_destroy(C_);
  }

  bool ready() const { return a_.get() && B_ && C_ && (c_.rows == FuzzCase::Rows::own || reordered_); }
  bool reordered() const { return reordered_ != nullptr; }

  // Plans `alg`; on success executes with the matrix's current values and then with the other set
  // (through set_values), checking C after each. Returns the plan's status; `chosen` and `reason`
  // tell what ran.
  sparsetc_status_t run(sparsetc_spmm_alg_t alg, sparsetc_spmm_alg_t* chosen, std::string* reason, bool* correct) {
    sparsetc_spmm_plan_t plan = nullptr;
    sparsetc_matrix_t A = reordered_ ? reordered_ : a_.get();
    const sparsetc_status_t status = sparsetc_spmm_plan_create(h_, &plan, c_.op, A, B_, C_, c_.compute, alg);
    if (status != SPARSETC_STATUS_SUCCESS) {
      *reason = last_error(h_);
      return status;
    }
    char text[1024] = {0};
    EXPECT_EQ(sparsetc_spmm_plan_get_alg(plan, chosen, text, sizeof text), SPARSETC_STATUS_SUCCESS);
    *reason = text;
    size_t bytes = 0;
    EXPECT_EQ(sparsetc_spmm_workspace_size(plan, &bytes), SPARSETC_STATUS_SUCCESS);
    std::unique_ptr<Buffer> workspace;
    if (c_.user_workspace && bytes > 0) workspace = std::make_unique<Buffer>(std::vector<uint8_t>(bytes), memory_);
    // (new values go to A itself: a reordered copy keeps the values it was made with)
    for (int pass = 0; pass < (reordered_ ? 1 : 2) && !::testing::Test::HasFatalFailure(); ++pass) {
      SCOPED_TRACE(pass == 0 ? "first multiply" : "second multiply, after new values");
      if (pass == 1) a_.switch_values();
      cd_->upload(c_initial_);
      const sparsetc_status_t executed = sparsetc_spmm_execute(plan, c_.alpha, B_, c_.beta, C_,
                                                               workspace ? workspace->get() : nullptr, bytes);
      EXPECT_EQ(executed, SPARSETC_STATUS_SUCCESS) << last_error(h_);
      if (memory_ == SPARSETC_MEMORY_DEVICE) {
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      }
      *correct = executed == SPARSETC_STATUS_SUCCESS && check(alg) && *correct;
    }
    EXPECT_EQ(sparsetc_spmm_plan_destroy(plan), SPARSETC_STATUS_SUCCESS);
    return SPARSETC_STATUS_SUCCESS;
  }

 private:
  static constexpr double kSentinel = -7.0;

  static size_t at(sparsetc_order_t order, int64_t i, int64_t j, int64_t ld) {
    return size_t(order == SPARSETC_ORDER_ROW ? i * ld + j : i + j * ld);
  }

  // Every element of C against the reference for the current values; C's padding untouched.
  bool check(sparsetc_spmm_alg_t requested) const {
    const std::vector<double> got = unpack(cd_->download(), c_.c_type);
    const int64_t m = c_.m, n = c_.n;
    std::vector<double> sum(size_t(m * n), 0.0), scale(size_t(m * n), 0.0);
    std::vector<int64_t> length(size_t(m), 0);
    for (size_t p = 0; p < size_t(a_.nnz()); ++p) {
      const auto [r, col] = a_.entry(p);
      const int64_t i = c_.op == SPARSETC_OP_NON_TRANSPOSE ? r : col;
      const int64_t l = c_.op == SPARSETC_OP_NON_TRANSPOSE ? col : r;
      length[size_t(i)]++;
      for (int64_t j = 0; j < n; ++j) {
        const double product = a_.value(p) * b_[size_t(l * n + j)];
        sum[size_t(i * n + j)] += product;
        scale[size_t(i * n + j)] += std::fabs(product);
      }
    }
    const bool f64 = c_.compute == SPARSETC_COMPUTE_64F ||
                     (c_.compute == SPARSETC_COMPUTE_DEFAULT && c_.in == SPARSETC_VALUE_F64);
    double unit = std::ldexp(1.0, f64 ? -53 : -24);
    // cuSPARSE's default algorithm (a COO or CSC A, op(A) = A^T, column-major or unaligned operands)
    // sums into a half-precision C in C's own precision (measured on an H200: 50 fp16 units off on
    // rows of 200 entries); cuSPARSE requested by name is held to that (AUTO takes it only where its
    // CSR_ALG2/ALG3 run, which sum in fp32).
    if (requested == SPARSETC_SPMM_ALG_CUSPARSE) unit = std::max(unit, output_bound(c_.c_type) / 2);
    const double inputs = c_.compute == SPARSETC_COMPUTE_TF32 ? std::ldexp(1.0, -9) : 0.0;
    int reported = 0;
    for (int64_t i = 0; i < m && reported < 5; ++i) {
      double accumulation = double(2 * length[size_t(i)] + 8) * unit;
      if (!f64) accumulation = std::max(accumulation, 1e-5);
      for (int64_t j = 0; j < n && reported < 5; ++j) {
        const size_t k = size_t(i * n + j);
        const double c0 = c_.beta != 0 ? c0_[c_.c_shift + at(c_.c_order, i, j, c_.ldc)] : 0.0;
        const double want = c_.alpha * sum[k] + c_.beta * c0;
        const double s = std::fabs(c_.alpha) * scale[k] + std::fabs(c_.beta * c0);
        const double bound =
            (accumulation + inputs) * s + output_bound(c_.c_type) * std::fabs(want) + output_floor(c_.c_type);
        const double g = got[c_.c_shift + at(c_.c_order, i, j, c_.ldc)];
        if (!std::isfinite(g) || std::fabs(g - want) > bound * 1.0001) {
          ADD_FAILURE() << "C(" << i << "," << j << ") = " << g << ", want " << want << " within " << bound
                        << (std::isfinite(g) ? "" : " (not written)");
          ++reported;
        }
      }
    }
    const int64_t lines = c_.c_order == SPARSETC_ORDER_ROW ? m : n, inside = c_.c_order == SPARSETC_ORDER_ROW ? n : m;
    for (int64_t p = 0; p < c_.c_shift && reported < 5; ++p)
      if (got[size_t(p)] != kSentinel) {
        ADD_FAILURE() << "written before C, at element " << p - c_.c_shift;
        ++reported;
      }
    for (int64_t o = 0; o < lines && reported < 5; ++o)
      for (int64_t p = inside; p < c_.ldc; ++p)
        if (got[size_t(c_.c_shift + o * c_.ldc + p)] != kSentinel) {
          ADD_FAILURE() << "C's padding written at line " << o << " offset " << p;
          ++reported;
          break;
        }
    return reported == 0;
  }

  sparsetc_handle_t h_;
  FuzzCase c_;
  sparsetc_memory_t memory_;
  SparseOperand a_;
  sparsetc_matrix_t reordered_ = nullptr;  // A with its rows permuted or reordered (FuzzCase::rows)
  std::vector<double> b_, c0_;
  std::vector<uint8_t> c_initial_;
  std::unique_ptr<Buffer> bd_, cd_;
  sparsetc_dense_t B_ = nullptr, C_ = nullptr;
};

const char* alg_name(sparsetc_spmm_alg_t a) {
  static const char* names[] = {"AUTO", "CPU", "CUSPARSE", "BCSR_TC", "CSR", "DCSR", "TILED_DCSR", "VBR_CUBLAS"};
  return a >= 0 && a <= 7 ? names[a] : "?";
}

// Rounds of random cases on one handle, each multiplied by every algorithm of `algorithms`; those of
// `must_take` may not refuse a case.
void fuzz_spmm(sparsetc_handle_t h, sparsetc_memory_t memory, const std::vector<sparsetc_spmm_alg_t>& algorithms,
               const std::vector<sparsetc_spmm_alg_t>& must_take, int rounds) {
  const uint64_t seed = fresh_seed();
  std::cout << "[ fuzz ] seed " << seed << " (SPARSETC_TEST_SEED replays the run), " << rounds << " rounds\n";
  Draw d(seed);
  FuzzTally tally;
  for (int round = 0; round < rounds; ++round) {
    FuzzCase c = draw_case(d);
    const int64_t stored_rows = c.op == SPARSETC_OP_NON_TRANSPOSE ? c.m : c.k;
    const int64_t stored_cols = c.op == SPARSETC_OP_NON_TRANSPOSE ? c.k : c.m;
    const Triplets stored = draw_structure(d, stored_rows, stored_cols, c.structure);
    finish_case(d, c, int64_t(stored.entries.size()));
    const std::string what = "round " + std::to_string(round) + ": " + describe(c, int64_t(stored.entries.size()));
    SCOPED_TRACE(what);
    FuzzRound r(h, c, stored, memory, d);
    ASSERT_TRUE(r.ready());
    std::string line;
    for (sparsetc_spmm_alg_t alg : algorithms) {
      SCOPED_TRACE(std::string("algorithm ") + alg_name(alg));
      sparsetc_spmm_alg_t chosen = alg;
      std::string reason;
      bool correct = true;
      const sparsetc_status_t status = r.run(alg, &chosen, &reason, &correct);
      line += tally.record(alg_name(alg), what, status, reason, correct);
      if (status == SPARSETC_STATUS_SUCCESS) {
        if (alg == SPARSETC_SPMM_ALG_AUTO) line = std::string(" AUTO ran ") + alg_name(chosen) + line;
        continue;
      }
      // On the device a row-reordered A is multiplied by the tensor-core path only (docs/api.md).
      const bool may_refuse = std::find(must_take.begin(), must_take.end(), alg) == must_take.end() ||
                              (r.reordered() && memory == SPARSETC_MEMORY_DEVICE);
      EXPECT_TRUE(may_refuse && status == SPARSETC_STATUS_NOT_SUPPORTED)
          << "status " << sparsetc_get_status_name(status) << ": " << reason;
      EXPECT_FALSE(reason.empty()) << "a refusal without a message";
    }
    std::cout << "[ fuzz ] " << what << ":" << line << "\n";
  }
  tally.print();
}

class GpuSpmmFuzz : public GpuTest {};

TEST_F(GpuSpmmFuzz, EveryAlgorithmMatchesTheFloat64ReferenceOnRandomCases) {
  fuzz_spmm(gpu_, SPARSETC_MEMORY_DEVICE,
            {SPARSETC_SPMM_ALG_AUTO, SPARSETC_SPMM_ALG_CUSPARSE, SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR,
             SPARSETC_SPMM_ALG_TILED_DCSR, SPARSETC_SPMM_ALG_BCSR_TC, SPARSETC_SPMM_ALG_VBR_CUBLAS},
            {SPARSETC_SPMM_ALG_AUTO, SPARSETC_SPMM_ALG_CSR, SPARSETC_SPMM_ALG_DCSR}, fuzz_rounds(40));
}

// The same cases in host memory on the CPU backend (no device needed: this one runs everywhere).
TEST(HostSpmmFuzz, AutoAndTheCpuEngineMatchTheFloat64ReferenceOnRandomCases) {
  sparsetc_handle_t cpu = nullptr;
  ASSERT_EQ(sparsetc_create_with_backend(&cpu, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
  fuzz_spmm(cpu, SPARSETC_MEMORY_HOST, {SPARSETC_SPMM_ALG_AUTO, SPARSETC_SPMM_ALG_CPU},
            {SPARSETC_SPMM_ALG_AUTO, SPARSETC_SPMM_ALG_CPU}, fuzz_rounds(25));
  sparsetc_destroy(cpu);
}

}  // namespace
