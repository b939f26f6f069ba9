// Row reordering for blocked multiplication: 1-SA (Sylos Labini et al., "Blocking Techniques for
// Sparse Matrix Multiplication on Tensor Accelerators", ../shared/papers/1sa-blocking-reordering.txt),
// Saad's SA as the paper's baseline, and the identity; the quality metrics of a blocking and the
// AUTO choice. docs/reordering.md states the algorithm exactly (tie-breaking, compressed rows,
// maximum group height, padding) and why the fast scan returns the exhaustive scan's groups.
//
// Output convention: a Blocking's permutation says that stored row i is original row
// permutation[i]; group_ptr partitions the stored rows into consecutive groups.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace sparsetc::detail::reorder {

// A sparsity pattern in CSR form: zero-based, columns increasing and unique within a row.
struct Pattern {
  int64_t rows = 0;
  int64_t cols = 0;
  const int64_t* row_ptr = nullptr;  // rows + 1
  const int64_t* col_idx = nullptr;  // row_ptr[rows]
};

enum class Method { identity, one_sa, sa };

// How identical quotient rows are found (Ashcraft compression). The classes do not depend on it;
// ashcraft_sum is the paper's Eq. (5), collision-prone on purpose in tests.
enum class HashKind { mixed, ashcraft_sum };

struct Options {
  double tau = 0.5;              // similarity threshold, (0, 1]
  int64_t block_width = 8;       // Δ_W: width of the column partition (1-SA); SA compares exact columns
  int64_t block_height = 16;     // h: padding target and the quality measure
  int64_t max_group_height = 0;  // 0: unlimited
  bool pad_groups = false;       // top groups up to a multiple of block_height
  int threads = 0;               // 0: OpenMP's default
  // Knobs of the fast scan (they never change the result; tests vary them).
  HashKind hash = HashKind::mixed;
  int prefix_slack = -1;         // t0 of the prefix index (>= 1); -1: the default rule
  int speculation = -1;          // seeds computed ahead per batch; -1: adaptive, 1: strictly sequential
  int64_t max_indexed_prefix = std::numeric_limits<int64_t>::max();  // longer prefixes are not indexed (at most 32767 anyway)
};

struct Blocking {
  std::vector<int64_t> permutation;  // rows entries: stored row i is original row permutation[i]
  std::vector<int64_t> group_ptr;    // groups + 1 entries, over stored rows
  int64_t groups() const { return group_ptr.empty() ? 0 : int64_t(group_ptr.size()) - 1; }
};

// Counters of a run, for logs, tests and the benchmark.
struct Stats {
  int64_t classes = 0;            // compressed (quotient) rows
  int64_t hash_collisions = 0;    // different patterns with equal hash and size
  int64_t index_entries = 0;      // (class, block) pairs in the prefix index
  int64_t counter_updates = 0;    // (class, block) touches while scanning lists
  int64_t candidates = 0;         // classes whose exact similarity was evaluated
  int64_t batches = 0;            // speculation batches
  int64_t speculated = 0;         // groups computed
  int64_t committed = 0;          // groups kept (speculated - committed were recomputed)
  double seconds_quotient = 0, seconds_compress = 0, seconds_index = 0, seconds_scan = 0, seconds_total = 0;
};

// Checks options (INVALID_VALUE naming the field).
void check_options(const Options& options);

// The fast algorithms: prefix-filtered inverted index over column blocks, candidates in class
// order, exact similarity at the visit, speculative parallel groups validated against the
// sequential order. Identical output to the oracles below for every input.
Blocking one_sa(const Pattern& a, const Options& options, Stats* stats = nullptr);
Blocking sa(const Pattern& a, const Options& options, Stats* stats = nullptr);

// The exhaustive scans: literal transcriptions of the paper's Algorithm 1 (compression) and
// Algorithm 2 (greedy grouping), O(C^2 k). Test oracles.
Blocking one_sa_oracle(const Pattern& a, const Options& options);
Blocking sa_oracle(const Pattern& a, const Options& options);

// Identity permutation, groups of block_height consecutive rows.
Blocking identity(int64_t rows, int64_t block_height);

Blocking run(const Pattern& a, Method method, const Options& options, Stats* stats = nullptr);

// Quality of a blocking of `a` (original order) whose stored row i is original row
// permutation[i] (nullptr: identity). BCSR: fixed h x w blocks over the stored rows. VBR: the
// groups (group_ptr; empty means chunks of h rows) times column blocks of width w, the paper's
// Δ'_H and ρ'.
struct Quality {
  int64_t block_height = 0, block_width = 0;
  int64_t blocks = 0;              // non-zero h x w blocks
  double in_block_density = 0;     // nnz / (blocks * h * w)
  int64_t block_rows = 0;          // ceil(rows / h)
  double blocks_per_block_row_mean = 0;
  double blocks_per_block_row_std = 0;  // population standard deviation
  int64_t blocks_per_block_row_max = 0;
  int64_t groups = 0;
  double mean_group_height = 0;    // rows / groups
  int64_t vbr_blocks = 0;          // non-zero (group, column block) pairs
  double vbr_in_block_density = 0; // ρ': nnz / sum over those blocks of height * width (edge blocks narrower)
  double vbr_mean_block_height = 0;  // Δ'_H: mean height of the non-zero VBR blocks
};
Quality measure(const Pattern& a, const int64_t* permutation, const std::vector<int64_t>& group_ptr,
                int64_t block_height, int64_t block_width, int threads = 0);

// An upper bound on the fill nnz / (blocks * h * w) of h x w blocks over every row order (any h):
// a block column touched by R rows needs at least ceil(R / h) blocks, and the R summed over block
// columns is the number of (row, block column) pairs, so blocks >= pairs / h and
// fill <= nnz / (pairs * w). One pass over the pattern: it tells that no reordering can make a
// matrix worth blocking without running one. 0 for an empty matrix.
double reachable_fill_bound(const Pattern& a, int64_t block_width);

// AUTO: the candidates are 1-SA with the options and, when neither a maximum height nor padding
// is asked for, 1-SA with groups capped at block_height and padded to it (aligned with the BCSR
// block rows, SMaT's variant). A candidate is eligible if it removes more than min_reduction of
// the block_height x block_width blocks of the identity and raises the standard deviation of
// blocks per block row by at most kAutoStdTolerance; the eligible one with the fewest blocks
// wins, and without one the identity stays.
constexpr double kAutoStdTolerance = 0.05;
struct AutoChoice {
  Method method = Method::identity;
  bool aligned = false;  // the capped and padded variant won
  Blocking blocking;
  Quality identity_quality;
  std::vector<Quality> candidate_quality;  // in the order above
};
AutoChoice choose(const Pattern& a, const Options& options, double min_reduction, Stats* stats = nullptr);

}  // namespace sparsetc::detail::reorder
