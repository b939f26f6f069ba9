// The scrambled random-block matrices of the 1-SA paper (generate_scrambled_blocks).
//
// What the paper says (../shared/papers/1sa-blocking-reordering.txt, Sec. 4.1 and 4.3.1):
//   "A matrix A(Δ, θ, ρ) is generated as follows: first, we divide the matrix in Δ×Δ blocks. Then,
//   we randomly select a fraction θ of these blocks that we flag as nonzero. Finally, for each
//   nonzero block, we select a fraction ρ of entries to be nonzero. We note that, following this
//   procedure, both the number of nonzero blocks in a blocked row and the number of nonzero
//   entries in a row are not fixed within the same matrix."
//   A reordering experiment then proceeds: "first, the rows of the matrix are scrambled. Then, the
//   columns are partitioned uniformly with width Δ" and the blocking algorithm is run; a perfect
//   recovery gives back ρ' = ρ at block height Δ'_H = Δ. Table 2 uses square matrices of
//   2^11..2^13 rows, Δ = 2^5..2^8, θ in {0.01, 0.1, 0.2, 0.3, 0.4}, ρ in {0.01 .. 0.5}; the figures
//   use 8192 x 8192, Δ = 64, θ = 0.1.
//
// Interpretation where the text leaves a choice:
//  - "select a fraction θ of these blocks" is read as exactly K = round(θ · #blocks) blocks (at
//    least 1), chosen uniformly without replacement among all blocks of the matrix (not per block
//    row, and not an independent coin per block). Likewise "a fraction ρ of entries" is exactly
//    m = round(ρ · h · w) entries of the h x w block (at least 1, so a block flagged nonzero is
//    nonzero), chosen uniformly without replacement among its cells. Hence the fraction of
//    nonzero blocks is θ and the density inside nonzero blocks is ρ up to rounding; as the paper
//    notes, individual rows still vary (a row of a nonzero block may even be empty).
//  - Only rows are scrambled, by a uniformly random permutation; columns keep their order, since
//    the recovery experiment partitions the columns regularly with width Δ.
//  - When Δ does not divide n, the last block row and block column are narrower (n mod Δ); the
//    paper only uses sizes that are multiples of Δ.
//  - groups[r] = the original block row (original row / Δ) of result row r: the ground truth a
//    1-dimensional reordering should recover (rows of one group share the same set of nonzero
//    blocks, though each row only fills part of them).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gen/gen_common.hpp"
#include "gen/generators.hpp"

namespace sparsetc::detail {

using namespace gen;

CsrMatrix<double> generate_scrambled_blocks(int64_t n, int64_t delta, double theta, double rho, uint64_t seed,
                                            std::vector<int64_t>* groups) {
  require(n >= 0 && n <= (int64_t(1) << 31), SPARSETC_STATUS_INVALID_VALUE, "blocks: n must be in [0, 2^31], got ", n);
  require(delta >= 1, SPARSETC_STATUS_INVALID_VALUE, "blocks: delta (block size) must be >= 1, got ", delta);
  require(theta > 0 && theta <= 1, SPARSETC_STATUS_INVALID_VALUE,
          "blocks: theta (fraction of nonzero blocks) must be in (0, 1], got ", theta);
  require(rho > 0 && rho <= 1, SPARSETC_STATUS_INVALID_VALUE,
          "blocks: rho (density inside nonzero blocks) must be in (0, 1], got ", rho);

  const int64_t nb = n == 0 ? 0 : (n - 1) / delta + 1;  // block rows = block columns
  const int64_t total_blocks = nb * nb;                 // <= 2^62
  auto extent = [&](int64_t block) { return std::min(delta, n - block * delta); };
  auto entries_in = [&](int64_t cells, double fraction) {
    return std::clamp<int64_t>(std::llround(fraction * double(cells)), 1, cells);
  };
  const int64_t nonzero_blocks = n == 0 ? 0 : entries_in(total_blocks, theta);
  const int64_t full = std::min(delta, n);
  require(sat_mul(nonzero_blocks, n == 0 ? 0 : entries_in(full * full, rho)) <= kMaxEntries,
          SPARSETC_STATUS_INVALID_VALUE, "blocks: the matrix would have about ", theta * rho * double(n) * double(n),
          " entries, more than the limit of 2^40");

  // The nonzero blocks, as ids I * nb + J in increasing order: grouped by block row I, then J.
  std::vector<int64_t> picked(static_cast<size_t>(nonzero_blocks));
  {
    Rng rng(seed, kTagBlockPick, 0);
    SampleScratch scratch;
    sample_sorted(uint64_t(total_blocks), uint64_t(nonzero_blocks), rng, picked.data(), scratch);
  }
  std::vector<int64_t> first_of_row(static_cast<size_t>(nb + 1));
  for (int64_t I = 0; I <= nb; ++I)
    first_of_row[size_t(I)] = std::lower_bound(picked.begin(), picked.end(), I * nb) - picked.begin();

  // Calls emit(local_row, col) for every entry of block row I, block by block in increasing J and
  // within a block in increasing (row, col). Block id's cells come from its own stream (seed, id),
  // so both passes below see the same entries whatever the threads.
  struct Scratch {
    SampleScratch sample;
    std::vector<int64_t> cells;
  };
  auto for_each_entry = [&](int64_t I, Scratch& scratch, auto&& emit) {
    const int64_t h = extent(I);
    for (int64_t k = first_of_row[size_t(I)]; k < first_of_row[size_t(I + 1)]; ++k) {
      const int64_t id = picked[size_t(k)], J = id % nb, w = extent(J);
      const int64_t m = entries_in(h * w, rho);
      Rng rng(seed, kTagBlockFill, uint64_t(id));
      scratch.cells.resize(size_t(m));
      sample_sorted(uint64_t(h * w), uint64_t(m), rng, scratch.cells.data(), scratch.sample);
      for (const int64_t cell : scratch.cells) emit(cell / w, J * delta + cell % w);
    }
  };

  // Row lengths in the original (unscrambled) order.
  std::vector<int64_t> length(size_t(n), 0);
  parallel_for<Scratch>(nb, 1, [&](int64_t I, Scratch& scratch) {
    for_each_entry(I, scratch, [&](int64_t lr, int64_t) { length[size_t(I * delta + lr)]++; });
  });

  // Row scrambling: result row p is original row perm[p] (Fisher-Yates, one stream).
  std::vector<int64_t> perm(static_cast<size_t>(n)), where(static_cast<size_t>(n));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  {
    Rng rng(seed, kTagBlockScramble, 0);
    for (int64_t i = n - 1; i > 0; --i) std::swap(perm[size_t(i)], perm[size_t(rng.below(uint64_t(i + 1)))]);
  }
  for (int64_t p = 0; p < n; ++p) where[size_t(perm[size_t(p)])] = p;

  CsrMatrix<double> m;
  m.rows = n;
  m.cols = n;
  m.row_ptr.assign(size_t(n + 1), 0);
  for (int64_t p = 0; p < n; ++p) m.row_ptr[size_t(p + 1)] = m.row_ptr[size_t(p)] + length[size_t(perm[size_t(p)])];
  m.col_idx.resize(size_t(m.row_ptr[size_t(n)]));
  m.values.resize(m.col_idx.size());
  const uint64_t vkey = value_key(seed);
  parallel_for<Scratch>(nb, 1, [&](int64_t I, Scratch& scratch) {
    std::vector<int64_t> cursor(static_cast<size_t>(extent(I)));
    for (int64_t lr = 0; lr < extent(I); ++lr) cursor[size_t(lr)] = m.row_ptr[size_t(where[size_t(I * delta + lr)])];
    for_each_entry(I, scratch, [&](int64_t lr, int64_t col) {
      const int64_t at = cursor[size_t(lr)]++;
      m.col_idx[size_t(at)] = col;
      m.values[size_t(at)] = value_at(vkey, I * delta + lr, col);  // keyed by the original row
    });
  });

  if (groups) {
    groups->resize(size_t(n));
    for (int64_t p = 0; p < n; ++p) (*groups)[size_t(p)] = perm[size_t(p)] / delta;
  }
  return m;
}

}  // namespace sparsetc::detail
