// Matrix generators for tests and benchmarks. Structure is deterministic for given parameters
// and seed; values are uniform in ±[0.5, 1.5] (random sign) from the seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/sparse.hpp"

namespace sparsetc::detail {

// n x n, entries (i, j) with |i - j| <= half_width.
CsrMatrix<double> generate_band(int64_t n, int64_t half_width, uint64_t seed);
// Stencils on a g x g (2D) or g x g x g (3D) grid, natural ordering: 5-point, 7-point, 27-point.
CsrMatrix<double> generate_poisson2d5(int64_t g, uint64_t seed);
CsrMatrix<double> generate_poisson3d7(int64_t g, uint64_t seed);
CsrMatrix<double> generate_poisson3d27(int64_t g, uint64_t seed);
// R-MAT (Chakrabarti et al.) 2^scale x 2^scale with about degree * 2^scale edges, quadrant
// probabilities a, b, c (d = 1 - a - b - c); repeated edges merged, so nnz <= degree * 2^scale.
CsrMatrix<double> generate_rmat(int scale, int64_t degree, double a, double b, double c, uint64_t seed);
// rows x cols with exactly per_row distinct uniformly random columns in every row.
CsrMatrix<double> generate_uniform(int64_t rows, int64_t cols, int64_t per_row, uint64_t seed);
// The scrambled random-block matrices of the 1-SA paper (../shared/papers/1sa-blocking-reordering.txt):
// n x n made of delta x delta blocks, a fraction theta of blocks non-zero, each non-zero block
// filled with density rho, then rows randomly permuted. If groups is not null it receives, for
// each row of the result, the block row it came from (the ground truth a reordering should recover).
CsrMatrix<double> generate_scrambled_blocks(int64_t n, int64_t delta, double theta, double rho, uint64_t seed,
                                            std::vector<int64_t>* groups = nullptr);

// Parses a spec and generates it:
//   band:n:half_width   poisson2d5:g   poisson3d7:g   poisson3d27:g
//   rmat:scale:degree[:a:b:c] (default 0.57:0.19:0.19)   uniform:n:per_row[:cols]
//   blocks:n:delta:theta:rho
// Throws INVALID_VALUE naming the problem for an unknown kind, a missing or bad number, or a
// size that is out of range.
CsrMatrix<double> generate(const std::string& spec, uint64_t seed);

}  // namespace sparsetc::detail
