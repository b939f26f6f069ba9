// Randomised SpGEMM through the C API on the GPU backend: each round draws op(A) and op(B) in the
// structures of fuzz_support.hpp, sizes (odd, 1, sometimes 0), value type (f64, f32, f16, bf16),
// compute type, each operand's format (CSR, CSC, COO in any order), index widths, base and
// ownership, op(A) and op(B), and sometimes a drop tolerance, a small memory budget (the binned
// path then works in row panels), a tensor-core precision or A's rows permuted (C must come back in
// A's own row order; the device refuses such an A in this version); then runs every device
// algorithm: symbolic, numeric, and numeric again after new values of A (sparsetc_matrix_set_values),
// and checks C's structure and values against the float64 reference over the inputs as the library
// sees them.
//
// Structure: every product's (i, j) once, nothing else; entries within rounding of the drop
// tolerance may go either way, and so may entries that cancel to zero where the algorithm removes
// those (tSparse); where C's pattern follows the values, the second numeric makes a new C. Values:
// the accumulation's (2L + 8) unit roundoffs (L products; at least 1e-5 for fp32 accumulation) plus
// the tensor cores' input rounding, times sum |a b|.
//
// AUTO must take every case (but a permuted A on the device); the others may refuse with
// NOT_SUPPORTED and a message (counted in the summary). The same cases run in host memory on the
// CPU backend (AUTO and CPU), where no device is needed. SPARSETC_FUZZ_ROUNDS sets the rounds
// (default 30 on the device, 20 on the host); SPARSETC_TEST_SEED replays a run.
#include <algorithm>
#include <climits>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz_support.hpp"

using namespace sparsetc_test;

namespace {

struct SpgemmCase {
  int64_t m = 0, k = 0, n = 0;
  sparsetc_operation_t op_a = SPARSETC_OP_NON_TRANSPOSE, op_b = SPARSETC_OP_NON_TRANSPOSE;
  std::string a_structure, b_structure;
  SparseLayout a_layout, b_layout;
  sparsetc_value_type_t type = SPARSETC_VALUE_F64;
  sparsetc_compute_type_t compute = SPARSETC_COMPUTE_DEFAULT;
  double drop = -1;
  bool permuted_a = false;  // A's rows permuted (sparsetc_matrix_permute_rows): C in A's own row order
  size_t budget = 0;
  sparsetc_tc_precision_t tc = SPARSETC_TC_PRECISION_DEFAULT;
};

std::string describe(const SpgemmCase& c, int64_t a_nnz, int64_t b_nnz) {
  static const char* computes[] = {"default", "32F", "64F", "TF32"};
  static const char* tcs[] = {"default", "F16", "BF16", "F64", "CUDA cores", "F16 split", "BF16 split"};
  std::ostringstream s;
  s << c.m << "x" << c.k << " * " << c.k << "x" << c.n << (c.op_a == SPARSETC_OP_TRANSPOSE ? " op(A)=T" : "")
    << (c.op_b == SPARSETC_OP_TRANSPOSE ? " op(B)=T" : "") << " " << type_name(c.type) << " compute "
    << computes[c.compute] << "; A (" << c.a_structure << ", " << a_nnz << " entries) " << describe(c.a_layout)
    << "; B (" << c.b_structure << ", " << b_nnz << " entries) " << describe(c.b_layout);
  if (c.drop >= 0) s << "; drop " << c.drop;
  if (c.budget) s << "; budget " << c.budget;
  if (c.tc) s << "; tensor cores " << tcs[c.tc];
  if (c.permuted_a) s << "; A's rows permuted";
  return s.str();
}

SpgemmCase draw_case(Draw& d) {
  SpgemmCase c;
  auto size = [&] {
    if (d.chance(0.03)) return int64_t(0);
    if (d.chance(0.06)) return int64_t(1);
    return d.chance(0.5) ? d.between(2, 200) : d.between(200, 1500);
  };
  c.m = size();
  c.k = size();
  c.n = size();
  c.op_a = d.chance(0.2) ? SPARSETC_OP_TRANSPOSE : SPARSETC_OP_NON_TRANSPOSE;
  c.op_b = d.chance(0.2) ? SPARSETC_OP_TRANSPOSE : SPARSETC_OP_NON_TRANSPOSE;
  c.type = d.chance(0.7) ? d.pick({SPARSETC_VALUE_F64, SPARSETC_VALUE_F32}) : d.pick({SPARSETC_VALUE_F16, SPARSETC_VALUE_BF16});
  c.compute = c.type == SPARSETC_VALUE_F64 ? d.pick({SPARSETC_COMPUTE_DEFAULT, SPARSETC_COMPUTE_64F})
                                           : d.pick({SPARSETC_COMPUTE_DEFAULT, SPARSETC_COMPUTE_32F});
  c.a_layout = draw_layout(d);
  c.b_layout = draw_layout(d);
  if (d.chance(0.15)) c.drop = d.pick({0.0, 0.05, 0.5});
  if (d.chance(0.15)) c.budget = size_t(d.pick<int64_t>({64 << 10, 256 << 10, 1 << 20}));
  c.permuted_a = d.chance(0.1);
  if (d.chance(0.25)) {  // what cuSPARSE takes: CSR with 32-bit indices, one base, A and B as they are, no drop
    c.op_a = c.op_b = SPARSETC_OP_NON_TRANSPOSE;
    c.type = d.pick({SPARSETC_VALUE_F64, SPARSETC_VALUE_F32});
    c.compute = SPARSETC_COMPUTE_DEFAULT;
    for (SparseLayout* l : {&c.a_layout, &c.b_layout}) {
      l->format = SPARSETC_FORMAT_CSR;
      l->offsets = l->indices = SPARSETC_INDEX_32;
      l->base = c.a_layout.base;
    }
    c.drop = -1;
  }
  if (d.chance(0.3))
    c.tc = d.pick({SPARSETC_TC_PRECISION_F16, SPARSETC_TC_PRECISION_BF16, SPARSETC_TC_PRECISION_F64,
                   SPARSETC_TC_PRECISION_CUDA_CORES, SPARSETC_TC_PRECISION_F16_SPLIT,
                   SPARSETC_TC_PRECISION_BF16_SPLIT});
  return c;
}

// The tensor-core precision tSparse runs for the case (its DEFAULT resolved as the API documents).
sparsetc_tc_precision_t effective_tc(const SpgemmCase& c) {
  if (c.tc != SPARSETC_TC_PRECISION_DEFAULT) return c.tc;
  if (c.type == SPARSETC_VALUE_F64 || c.compute == SPARSETC_COMPUTE_64F) return SPARSETC_TC_PRECISION_F64;
  return c.type == SPARSETC_VALUE_BF16 ? SPARSETC_TC_PRECISION_BF16 : SPARSETC_TC_PRECISION_F16;
}

// Relative error of the inputs as the tensor cores see them (both factors rounded).
double tc_input_error(sparsetc_tc_precision_t p) {
  switch (p) {
    case SPARSETC_TC_PRECISION_F16: return std::ldexp(1.0, -10);
    case SPARSETC_TC_PRECISION_BF16: return std::ldexp(1.0, -7);
    case SPARSETC_TC_PRECISION_F16_SPLIT: return std::ldexp(1.0, -19);
    case SPARSETC_TC_PRECISION_BF16_SPLIT: return std::ldexp(1.0, -13);
    case SPARSETC_TC_PRECISION_CUDA_CORES: return std::ldexp(1.0, -23);
    default: return 0.0;
  }
}

// One entry of the reference: sum, sum of |products|, number of products.
struct Expected {
  double sum = 0, scale = 0;
  int64_t products = 0;
};

class SpgemmRound {
 public:
  // h multiplies operands in `memory`; cpu (a CPU-backend handle) reads C back.
  SpgemmRound(sparsetc_handle_t h, sparsetc_handle_t cpu, sparsetc_memory_t memory, const SpgemmCase& c,
              const Triplets& a, const Triplets& b, Draw& d)
      : h_(h), cpu_(cpu), c_(c), a_(h, a, c.a_layout, c.type, memory, d), b_(h, b, c.b_layout, c.type, memory, d) {
    if (c.permuted_a) {
      std::vector<int64_t> permutation(size_t(a.rows));
      std::iota(permutation.begin(), permutation.end(), int64_t(0));
      std::shuffle(permutation.begin(), permutation.end(), d.engine());
      EXPECT_EQ(sparsetc_matrix_permute_rows(h, a_.get(), permutation.data(), &permuted_), SPARSETC_STATUS_SUCCESS)
          << last_error(h);
    }
  }
  ~SpgemmRound() { sparsetc_matrix_destroy(permuted_); }

  bool ready() const { return a_.get() && b_.get() && (!c_.permuted_a || permuted_); }
  bool permuted() const { return permuted_ != nullptr; }

  // Plans `alg` and runs symbolic, numeric, and numeric after new values of A, checking C after
  // each numeric. Returns the plan's status.
  sparsetc_status_t run(sparsetc_spgemm_alg_t alg, sparsetc_spgemm_alg_t* chosen, std::string* reason, bool* correct) {
    sparsetc_spgemm_options_t options{};
    options.struct_size = sizeof options;
    options.drop_tolerance = c_.drop;
    options.memory_budget = c_.budget;
    options.tc_precision = c_.tc;
    sparsetc_spgemm_plan_t plan = nullptr;
    const sparsetc_status_t status = sparsetc_spgemm_plan_create(h_, &plan, c_.op_a, permuted_ ? permuted_ : a_.get(),
                                                                 c_.op_b, b_.get(), c_.compute, alg, &options);
    if (status != SPARSETC_STATUS_SUCCESS) {
      *reason = last_error(h_);
      return status;
    }
    char text[1024] = {0};
    EXPECT_EQ(sparsetc_spgemm_plan_get_alg(plan, chosen, text, sizeof text), SPARSETC_STATUS_SUCCESS);
    *reason = text;
    int64_t nnz = -1;
    const sparsetc_status_t symbolic = sparsetc_spgemm_symbolic(plan, &nnz);
    EXPECT_EQ(symbolic, SPARSETC_STATUS_SUCCESS) << last_error(h_);
    sparsetc_matrix_t C = nullptr;
    // (new values go to A itself: a permuted copy keeps the values it was made with)
    for (int pass = 0; pass < (permuted_ ? 1 : 2) && symbolic == SPARSETC_STATUS_SUCCESS; ++pass) {
      SCOPED_TRACE(pass == 0 ? "first numeric" : "numeric after new values of A");
      if (pass == 1) {
        a_.switch_values();
        if (pattern_follows_values(*chosen)) {  // C's pattern may change: numeric makes a new C (the API's rule)
          sparsetc_matrix_destroy(C);
          C = nullptr;
        }
      }
      const sparsetc_status_t numeric = sparsetc_spgemm_numeric(plan, &C);
      EXPECT_EQ(numeric, SPARSETC_STATUS_SUCCESS) << last_error(h_);
      // The symbolic count holds for the values it saw (an upper bound where a drop tolerance applies).
      const int64_t bound = pass == 0 || !pattern_follows_values(*chosen) ? nnz : INT64_MAX;
      *correct = numeric == SPARSETC_STATUS_SUCCESS && check(C, *chosen, bound) && *correct;
    }
    sparsetc_matrix_destroy(C);
    EXPECT_EQ(sparsetc_spgemm_plan_destroy(plan), SPARSETC_STATUS_SUCCESS);
    return SPARSETC_STATUS_SUCCESS;
  }

 private:
  // op(A) op(B) in float64 from the current values.
  std::map<std::pair<int64_t, int64_t>, Expected> reference() const {
    std::vector<std::vector<std::pair<int64_t, double>>> b_rows(size_t(c_.k));
    for (size_t p = 0; p < size_t(b_.nnz()); ++p) {
      const auto [r, col] = b_.entry(p);
      const int64_t l = c_.op_b == SPARSETC_OP_NON_TRANSPOSE ? r : col;
      const int64_t j = c_.op_b == SPARSETC_OP_NON_TRANSPOSE ? col : r;
      b_rows[size_t(l)].push_back({j, b_.value(p)});
    }
    std::map<std::pair<int64_t, int64_t>, Expected> want;
    for (size_t p = 0; p < size_t(a_.nnz()); ++p) {
      const auto [r, col] = a_.entry(p);
      const int64_t i = c_.op_a == SPARSETC_OP_NON_TRANSPOSE ? r : col;
      const int64_t l = c_.op_a == SPARSETC_OP_NON_TRANSPOSE ? col : r;
      for (const auto& [j, w] : b_rows[size_t(l)]) {
        Expected& e = want[{i, j}];
        e.sum += a_.value(p) * w;
        e.scale += std::fabs(a_.value(p) * w);
        e.products++;
      }
    }
    return want;
  }

  // Whether C's pattern depends on the values: tSparse removes entries that cancel to zero, and a
  // drop tolerance removes small ones (binned, CPU and tSparse; cuSPARSE refuses one).
  bool pattern_follows_values(sparsetc_spgemm_alg_t ran) const {
    return ran == SPARSETC_SPGEMM_ALG_TSPARSE_TC || c_.drop >= 0;
  }

  bool check(sparsetc_matrix_t C, sparsetc_spgemm_alg_t ran, int64_t symbolic_nnz) const {
    const Entries read = read_entries(h_, cpu_, C);
    EXPECT_EQ(read.m, c_.m);
    EXPECT_EQ(read.n, c_.n);
    std::map<std::pair<int64_t, int64_t>, double> got;
    for (size_t e = 0; e < read.rows.size(); ++e) got[{read.rows[e], read.cols[e]}] = read.vals[e];
    EXPECT_EQ(got.size(), read.rows.size()) << "repeated entries in C";
    EXPECT_LE(int64_t(read.rows.size()), symbolic_nnz) << "more entries than the symbolic count";

    const bool tsparse = ran == SPARSETC_SPGEMM_ALG_TSPARSE_TC;
    const bool drops = c_.drop >= 0;
    const bool f64 = tsparse ? effective_tc(c_) == SPARSETC_TC_PRECISION_F64
                             : c_.compute == SPARSETC_COMPUTE_64F ||
                                   (c_.compute == SPARSETC_COMPUTE_DEFAULT && c_.type == SPARSETC_VALUE_F64);
    const double unit = std::ldexp(1.0, f64 ? -53 : -24), inputs = tsparse ? tc_input_error(effective_tc(c_)) : 0.0;
    int reported = 0;
    auto fail = [&](const std::string& what) {
      if (reported++ < 5) ADD_FAILURE() << what;
    };
    for (const auto& [ij, e] : reference()) {
      double accumulation = double(2 * e.products + 8) * unit;
      if (!f64) accumulation = std::max(accumulation, 1e-5);
      const double bound = (accumulation + inputs) * e.scale;
      const auto it = got.find(ij);
      const bool may_be_dropped = (drops && std::fabs(e.sum) <= c_.drop + bound) ||
                                  (tsparse && std::fabs(e.sum) <= bound);
      const bool must_be_dropped = drops && std::fabs(e.sum) < c_.drop - bound;
      const std::string at = "C(" + std::to_string(ij.first) + "," + std::to_string(ij.second) + ")";
      if (it == got.end()) {
        if (!may_be_dropped) fail(at + " missing (want " + std::to_string(e.sum) + ")");
        continue;
      }
      if (must_be_dropped) fail(at + " = " + std::to_string(it->second) + " kept under the drop tolerance");
      if (!(std::fabs(it->second - e.sum) <= bound * 1.0001))
        fail(at + " = " + std::to_string(it->second) + ", want " + std::to_string(e.sum) + " within " +
             std::to_string(bound));
      got.erase(it);
    }
    for (const auto& [ij, value] : got)
      fail("C(" + std::to_string(ij.first) + "," + std::to_string(ij.second) + ") = " + std::to_string(value) +
           " is not a product's entry");
    return reported == 0;
  }

  sparsetc_handle_t h_, cpu_;
  SpgemmCase c_;
  SparseOperand a_, b_;
  sparsetc_matrix_t permuted_ = nullptr;  // A with its rows permuted (SpgemmCase::permuted_a)
};

// Products of op(A) op(B): the entries of op(A) in column l times those of op(B) in row l.
int64_t products(const Triplets& a, sparsetc_operation_t op_a, const Triplets& b, sparsetc_operation_t op_b,
                 int64_t k) {
  std::vector<int64_t> a_in(size_t(k), 0), b_in(size_t(k), 0);
  for (const auto& [rc, v] : a.entries) a_in[size_t(op_a == SPARSETC_OP_NON_TRANSPOSE ? rc.second : rc.first)]++;
  for (const auto& [rc, v] : b.entries) b_in[size_t(op_b == SPARSETC_OP_NON_TRANSPOSE ? rc.first : rc.second)]++;
  int64_t total = 0;
  for (int64_t l = 0; l < k; ++l) total += a_in[size_t(l)] * b_in[size_t(l)];
  return total;
}

const char* alg_name(sparsetc_spgemm_alg_t a) {
  static const char* names[] = {"AUTO", "BINNED", "TSPARSE_TC", "CUSPARSE", "CPU"};
  return a >= 0 && a <= 4 ? names[a] : "?";
}

// Rounds of random cases on handle h (operands in `memory`), each multiplied by every algorithm of
// `algorithms`; AUTO may not refuse a case.
void fuzz_spgemm(sparsetc_handle_t h, sparsetc_handle_t cpu, sparsetc_memory_t memory,
                 const std::vector<sparsetc_spgemm_alg_t>& algorithms, int rounds) {
  const uint64_t seed = fresh_seed();
  std::cout << "[ fuzz ] seed " << seed << " (SPARSETC_TEST_SEED replays the run), " << rounds << " rounds\n";
  Draw d(seed);
  FuzzTally tally;
  for (int round = 0; round < rounds; ++round) {
    SpgemmCase c;
    Triplets a, b;
    do {  // a case whose float64 reference stays small (dense rows times dense columns are not)
      c = draw_case(d);
      const int64_t a_rows = c.op_a == SPARSETC_OP_NON_TRANSPOSE ? c.m : c.k;
      const int64_t a_cols = c.op_a == SPARSETC_OP_NON_TRANSPOSE ? c.k : c.m;
      const int64_t b_rows = c.op_b == SPARSETC_OP_NON_TRANSPOSE ? c.k : c.n;
      const int64_t b_cols = c.op_b == SPARSETC_OP_NON_TRANSPOSE ? c.n : c.k;
      a = draw_structure(d, a_rows, a_cols, c.a_structure, 60);
      b = draw_structure(d, b_rows, b_cols, c.b_structure, 60);
    } while (products(a, c.op_a, b, c.op_b, c.k) > 400000);
    const std::string what = "round " + std::to_string(round) + ": " +
                             describe(c, int64_t(a.entries.size()), int64_t(b.entries.size()));
    SCOPED_TRACE(what);
    SpgemmRound r(h, cpu, memory, c, a, b, d);
    ASSERT_TRUE(r.ready());
    std::string line;
    for (sparsetc_spgemm_alg_t alg : algorithms) {
      SCOPED_TRACE(std::string("algorithm ") + alg_name(alg));
      sparsetc_spgemm_alg_t chosen = alg;
      std::string reason;
      bool correct = true;
      const sparsetc_status_t status = r.run(alg, &chosen, &reason, &correct);
      line += tally.record(alg_name(alg), what, status, reason, correct);
      if (status == SPARSETC_STATUS_SUCCESS) {
        if (alg == SPARSETC_SPGEMM_ALG_AUTO) line = std::string(" AUTO ran ") + alg_name(chosen) + line;
        continue;
      }
      // tSparse asked for compute 64F with a tensor-core precision other than F64: a contradiction.
      const bool contradiction = alg == SPARSETC_SPGEMM_ALG_TSPARSE_TC && c.compute == SPARSETC_COMPUTE_64F &&
                                 c.tc != SPARSETC_TC_PRECISION_DEFAULT && c.tc != SPARSETC_TC_PRECISION_F64;
      // A row-permuted device matrix is not multiplied on the device in this version (docs/api.md).
      const bool permuted_on_device = r.permuted() && memory == SPARSETC_MEMORY_DEVICE;
      EXPECT_TRUE(((alg != SPARSETC_SPGEMM_ALG_AUTO || permuted_on_device) &&
                   status == SPARSETC_STATUS_NOT_SUPPORTED) ||
                  (contradiction && status == SPARSETC_STATUS_INVALID_VALUE))
          << "status " << sparsetc_get_status_name(status) << ": " << reason;
      EXPECT_FALSE(reason.empty()) << "a refusal without a message";
    }
    std::cout << "[ fuzz ] " << what << ":" << line << "\n";
  }
  tally.print();
}

class GpuSpgemmFuzz : public GpuTest {};

TEST_F(GpuSpgemmFuzz, EveryAlgorithmMatchesTheFloat64ReferenceOnRandomCases) {
  fuzz_spgemm(gpu_, cpu_, SPARSETC_MEMORY_DEVICE,
              {SPARSETC_SPGEMM_ALG_AUTO, SPARSETC_SPGEMM_ALG_BINNED_MERGE_PATH, SPARSETC_SPGEMM_ALG_TSPARSE_TC,
               SPARSETC_SPGEMM_ALG_CUSPARSE},
              fuzz_rounds(30));
}

// The same cases in host memory on the CPU backend (no device needed: this one runs everywhere).
TEST(HostSpgemmFuzz, AutoAndTheCpuEngineMatchTheFloat64ReferenceOnRandomCases) {
  sparsetc_handle_t cpu = nullptr;
  ASSERT_EQ(sparsetc_create_with_backend(&cpu, SPARSETC_BACKEND_CPU, 0), SPARSETC_STATUS_SUCCESS);
  fuzz_spgemm(cpu, cpu, SPARSETC_MEMORY_HOST, {SPARSETC_SPGEMM_ALG_AUTO, SPARSETC_SPGEMM_ALG_CPU}, fuzz_rounds(20));
  sparsetc_destroy(cpu);
}

}  // namespace
