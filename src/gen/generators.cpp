// Band, Poisson stencil, uniform random and R-MAT generators (see generators.hpp). The scrambled
// block matrices of the 1-SA paper are in blocks.cpp, the spec parser in spec.cpp.
#include "gen/generators.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "gen/gen_common.hpp"

namespace sparsetc::detail {

using namespace gen;

namespace {

void require_size(int64_t value, const char* what, const char* generator) {
  require(value >= 0, SPARSETC_STATUS_INVALID_VALUE, generator, ": ", what, " must be >= 0, got ", value);
}

void require_entries(int64_t entries, const char* generator) {
  require(entries <= kMaxEntries, SPARSETC_STATUS_INVALID_VALUE, generator, ": the matrix would have ",
          entries >= kSaturated ? std::string("more than 2^62") : std::to_string(entries),
          " entries, more than the limit of 2^40");
}

// Rows of a g x g (x g) grid after checking that nnz(g), the exact count of stored entries, is
// within the limit (g is bounded first so that nnz(g) cannot overflow).
template <typename NnzFn>
int64_t grid_points(int64_t g, int dims, NnzFn&& nnz, const char* generator) {
  require_size(g, "g", generator);
  const int64_t bound = dims == 2 ? int64_t(1) << 21 : int64_t(1) << 14;  // beyond it nnz > 2^40 anyway
  require_entries(g > bound ? kSaturated : nnz(g), generator);
  return dims == 2 ? g * g : g * g * g;
}

// Number of grid neighbours of coordinate x in [0, g) along one axis, x itself included.
inline int64_t span(int64_t x, int64_t g) { return 1 + (x > 0) + (x + 1 < g); }

}  // namespace

CsrMatrix<double> generate_band(int64_t n, int64_t half_width, uint64_t seed) {
  require_size(n, "n", "band");
  require_size(half_width, "half_width", "band");
  require_entries(n, "band");  // nnz >= n; this also bounds h below
  const int64_t h = n > 0 ? std::min(half_width, n - 1) : 0;
  // nnz = n (2h + 1) - h (h + 1) = (n - h)(2h + 1) + h^2, the latter free of cancellation.
  require_entries(sat_add(sat_mul(n - h, 2 * h + 1), sat_mul(h, h)), "band");
  return build_by_rows<NoScratch>(
      n, n, seed, [&](int64_t i) { return std::min(n - 1, i + h) - std::max<int64_t>(0, i - h) + 1; },
      [&](int64_t i, int64_t* out, NoScratch&) {
        for (int64_t j = std::max<int64_t>(0, i - h), last = std::min(n - 1, i + h); j <= last; ++j) *out++ = j;
      });
}

CsrMatrix<double> generate_poisson2d5(int64_t g, uint64_t seed) {
  const int64_t n = grid_points(
      g, 2, [](int64_t k) { return 5 * k * k - 4 * k; }, "poisson2d5");
  // Row i is grid point (x, y) with i = x + g*y; its neighbours in increasing index order are
  // (x, y-1), (x-1, y), (x, y), (x+1, y), (x, y+1).
  return build_by_rows<NoScratch>(
      n, n, seed,
      [&](int64_t i) {
        const int64_t x = i % g, y = i / g;
        return span(x, g) + span(y, g) - 1;
      },
      [&](int64_t i, int64_t* out, NoScratch&) {
        const int64_t x = i % g, y = i / g;
        if (y > 0) *out++ = i - g;
        if (x > 0) *out++ = i - 1;
        *out++ = i;
        if (x + 1 < g) *out++ = i + 1;
        if (y + 1 < g) *out++ = i + g;
      });
}

CsrMatrix<double> generate_poisson3d7(int64_t g, uint64_t seed) {
  const int64_t n = grid_points(
      g, 3, [](int64_t k) { return 7 * k * k * k - 6 * k * k; }, "poisson3d7");
  const int64_t gg = g * g;
  // Row i is grid point (x, y, z) with i = x + g*y + g*g*z.
  return build_by_rows<NoScratch>(
      n, n, seed,
      [&](int64_t i) {
        const int64_t x = i % g, y = i / g % g, z = i / gg;
        return span(x, g) + span(y, g) + span(z, g) - 2;
      },
      [&](int64_t i, int64_t* out, NoScratch&) {
        const int64_t x = i % g, y = i / g % g, z = i / gg;
        if (z > 0) *out++ = i - gg;
        if (y > 0) *out++ = i - g;
        if (x > 0) *out++ = i - 1;
        *out++ = i;
        if (x + 1 < g) *out++ = i + 1;
        if (y + 1 < g) *out++ = i + g;
        if (z + 1 < g) *out++ = i + gg;
      });
}

CsrMatrix<double> generate_poisson3d27(int64_t g, uint64_t seed) {
  const int64_t n = grid_points(
      g, 3, [](int64_t k) { return k == 0 ? 0 : (3 * k - 2) * (3 * k - 2) * (3 * k - 2); }, "poisson3d27");
  const int64_t gg = g * g;
  // All (dz, dy, dx) in {-1, 0, 1}^3 that stay on the grid; lexicographic order of the neighbour's
  // coordinates (z, y, x) is increasing index order.
  return build_by_rows<NoScratch>(
      n, n, seed,
      [&](int64_t i) {
        const int64_t x = i % g, y = i / g % g, z = i / gg;
        return span(x, g) * span(y, g) * span(z, g);
      },
      [&](int64_t i, int64_t* out, NoScratch&) {
        const int64_t x = i % g, y = i / g % g, z = i / gg;
        for (int64_t dz = -1; dz <= 1; ++dz) {
          if (z + dz < 0 || z + dz >= g) continue;
          for (int64_t dy = -1; dy <= 1; ++dy) {
            if (y + dy < 0 || y + dy >= g) continue;
            for (int64_t dx = -1; dx <= 1; ++dx) {
              if (x + dx < 0 || x + dx >= g) continue;
              *out++ = i + dz * gg + dy * g + dx;
            }
          }
        }
      });
}

CsrMatrix<double> generate_uniform(int64_t rows, int64_t cols, int64_t per_row, uint64_t seed) {
  require_size(rows, "rows", "uniform");
  require_size(cols, "cols", "uniform");
  require_size(per_row, "per_row", "uniform");
  require(per_row <= cols, SPARSETC_STATUS_INVALID_VALUE, "uniform: per_row (", per_row,
          ") must not exceed the number of columns (", cols, ")");
  require(rows <= kMaxEntries, SPARSETC_STATUS_INVALID_VALUE, "uniform: ", rows, " rows, more than the limit of 2^40");
  require_entries(sat_mul(rows, per_row), "uniform");
  // Row i draws its columns from its own stream (seed, i): independent of the thread schedule.
  return build_by_rows<SampleScratch>(
      rows, cols, seed, [&](int64_t) { return per_row; },
      [&](int64_t i, int64_t* out, SampleScratch& scratch) {
        Rng rng(seed, kTagUniformRow, uint64_t(i));
        sample_sorted(uint64_t(cols), uint64_t(per_row), rng, out, scratch);
      });
}

// R-MAT: each of the degree * 2^scale edges descends `scale` levels; at each level one quadrant is
// chosen with probabilities a (top left), b (top right), c (bottom left), d (bottom right), which
// fixes one bit of the row and of the column, most significant first (no noise is added to a, b,
// c, d between levels). A level compares 32 random bits with the cumulative probabilities, so a,
// b, c are resolved to 2^-32. Edges are produced in blocks of 2^16, each from its own stream
// (seed, block), so the edges do not depend on the threads. Repeated edges are merged into one
// entry (nnz <= degree * 2^scale); self loops are kept.
CsrMatrix<double> generate_rmat(int scale, int64_t degree, double a, double b, double c, uint64_t seed) {
  require(scale >= 0 && scale <= 40, SPARSETC_STATUS_INVALID_VALUE, "rmat: scale must be in [0, 40], got ", scale);
  require_size(degree, "degree", "rmat");
  for (const auto& [p, name] : {std::pair{a, "a"}, std::pair{b, "b"}, std::pair{c, "c"}})
    require(p >= 0 && p <= 1, SPARSETC_STATUS_INVALID_VALUE, "rmat: probability ", name, " must be in [0, 1], got ", p);
  const double d = 1.0 - a - b - c;
  require(d >= -1e-9, SPARSETC_STATUS_INVALID_VALUE, "rmat: a + b + c must be <= 1, got ", a + b + c);
  const int64_t n = int64_t(1) << scale;
  const int64_t edges = sat_mul(degree, n);
  require_entries(edges, "rmat");  // n <= 2^40 by the scale

  // Quadrant thresholds on 32-bit uniform integers (one 64-bit draw serves two levels).
  auto threshold = [](double p) { return p >= 1 ? uint64_t(1) << 32 : uint64_t(std::ldexp(std::max(p, 0.0), 32)); };
  const uint64_t t_a = threshold(a), t_ab = threshold(a + b), t_abc = threshold(a + b + c);
  // Pass 1: the edges in a fixed order, block by block; block blk comes from its own stream.
  constexpr int64_t kBlock = int64_t(1) << 16;
  const int64_t blocks = (edges + kBlock - 1) / kBlock;
  std::vector<int64_t> edge_row(static_cast<size_t>(edges)), edge_col(static_cast<size_t>(edges));
  parallel_for<NoScratch>(blocks, 1, [&](int64_t blk, NoScratch&) {
    Rng rng(seed, kTagRmatBlock, uint64_t(blk));
    for (int64_t e = blk * kBlock, end = std::min(edges, (blk + 1) * kBlock); e < end; ++e) {
      int64_t row = 0, col = 0;
      uint64_t draw = 0;
      for (int level = 0; level < scale; ++level) {
        draw = level % 2 == 0 ? rng.next() : draw << 32;
        const uint64_t u = draw >> 32;
        const int64_t rbit = u >= t_ab, cbit = ((u >= t_a) & (u < t_ab)) | (u >= t_abc);
        row = row << 1 | rbit;
        col = col << 1 | cbit;
      }
      edge_row[size_t(e)] = row;
      edge_col[size_t(e)] = col;
    }
  });

  // Pass 2: a counting sort of the edges by row. Each part owns a range of rows and scans every
  // edge, so no two threads write the same counter and a row's bucket keeps the edge order.
  const int64_t parts = std::min<int64_t>(std::max(1, omp_threads()), 64);
  std::vector<int64_t> start(size_t(n + 1), 0);
  parallel_for<NoScratch>(parts, 1, [&](int64_t part, NoScratch&) {
    const int64_t lo = n * part / parts, hi = n * (part + 1) / parts;
    for (const int64_t row : edge_row)
      if (row >= lo && row < hi) start[size_t(row + 1)]++;
  });
  for (int64_t i = 0; i < n; ++i) start[size_t(i + 1)] += start[size_t(i)];
  std::vector<int64_t> cursor(start.begin(), start.end() - 1);
  std::vector<int64_t> bucket(static_cast<size_t>(edges));
  parallel_for<NoScratch>(parts, 1, [&](int64_t part, NoScratch&) {
    // Rows split so that every part scatters about the same number of edges (R-MAT rows are skewed).
    auto first_row = [&](int64_t k) {
      const int64_t target = edges * k / parts;  // edges <= 2^40, k <= 64
      return std::min(n, int64_t(std::lower_bound(start.begin(), start.end(), target) - start.begin()));
    };
    const int64_t lo = first_row(part), hi = part + 1 == parts ? n : first_row(part + 1);
    for (int64_t e = 0; e < edges; ++e) {
      const int64_t row = edge_row[size_t(e)];
      if (row >= lo && row < hi) bucket[size_t(cursor[size_t(row)]++)] = edge_col[size_t(e)];
    }
  });
  // Sort and merge each row's bucket in place; cursor[i] becomes its distinct count.
  parallel_for<NoScratch>(n, 1024, [&](int64_t i, NoScratch&) {
    int64_t* first = bucket.data() + start[size_t(i)];
    int64_t* last = bucket.data() + start[size_t(i + 1)];
    std::sort(first, last);
    cursor[size_t(i)] = std::unique(first, last) - first;
  });
  return build_by_rows<NoScratch>(
      n, n, seed, [&](int64_t i) { return cursor[size_t(i)]; },
      [&](int64_t i, int64_t* out, NoScratch&) {
        std::copy_n(bucket.data() + start[size_t(i)], cursor[size_t(i)], out);
      });
}

}  // namespace sparsetc::detail
