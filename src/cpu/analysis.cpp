// Structure statistics of a CSR matrix (sparsetc_analyze), in one pass over the rows.
//
// Every field is derived by analysis_from_sums from a handful of exact sums (AnalysisSums in
// cpu_kernels.hpp). Partial sums are kept per block of kBlockRows rows and combined in block order,
// so every field is the same for any thread count; the GPU engine (src/gpu/analysis/) produces the
// same sums, so the fields that depend only on integers are bitwise identical on both engines.
//
// Definitions and conventions:
//  - Row lengths: min, max, mean = nnz / rows, population std. The std comes from the exact
//    integer sum of squared lengths: var = (rows * sum(l^2) - nnz^2) / rows^2 with a 128-bit
//    numerator (no cancellation, no summation order).
//  - BCSR blocks h x w (16x8, 16x16, 8x8) are aligned at multiples of h and w; a block exists iff
//    it holds a stored entry (explicit zeros count: the analysis is structural). Partial blocks at
//    the bottom and right edges count like full ones. fill = nnz / (blocks * h * w), 0 without
//    blocks.
//  - 8x8 bitmap tiles (tSparse): the non-empty 8x8 blocks. A tile's density is its stored entries
//    / 64 (tSparse's Table 1 reports the count itself, i.e. 64 times our value). Over the tiles:
//    median (the mean of the two middle values for an even count), mean (= fill_8x8) and
//    population std, all exact from a 65-bin histogram of the counts. 0 without tiles.
//  - DCSR (Fujiki et al., Eq. 1-2): the columns are cut into ceil(cols / W) vertical strips of W =
//    strip_width columns (the last one narrower); a row segment is the part of one row inside one
//    strip, and it counts when it holds an entry. n_nnzrow = non-empty rows; n_nnzrow_strip(t) =
//    non-empty row segments of strip t, so the mean over strips is (row segments) / strips (0 when
//    cols == 0).
//    H_norm = -sum_seg p ln p / ln nnz with p = c / nnz (c = entries of the segment); 0 when
//    nnz <= 1 (ln nnz would be 0). It is computed from two sums of non-negative terms,
//    S = sum c ln c and R = sum c ln(nnz / c) (R with log1p), for which H_norm = R / (nnz ln nnz)
//    and 1 - H_norm = S / (nnz ln nnz); the smaller of the two is divided out and the other is
//    1 minus it, so both H_norm near 0 and near 1 keep their relative accuracy and a perfectly
//    spread matrix (every segment one entry) gives exactly H_norm = 1, SSF = 0.
//    SSF = (n_nnzrow / n) / mean(n_nnzrow_strip / n) * (nnz / n) * (1 - H_norm) with n = rows
//    (the paper's matrices are square; for a rectangular one the row count is used). SSF = 0 when
//    rows == 0 or nnz == 0 (undefined). With nnz == 1, H_norm = 0 and SSF = strips / rows.
//    The entropy sums are compensated (Neumaier) doubles: reproducible for any thread count here,
//    and within about 1e-12 relative (in practice ~1e-15) of the GPU's, which sums in another
//    order with the device's log.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/cpu_kernels.hpp"

namespace sparsetc::detail {
namespace {

using u128 = unsigned __int128;

// Compensated (Neumaier) sum of the entropy terms: many terms of mixed sizes in one chunk.
struct CompensatedSum {
  double sum = 0, compensation = 0;
  void add(double x) {
    const double t = sum + x;
    compensation += std::abs(sum) >= std::abs(x) ? (sum - t) + x : (x - t) + sum;
    sum = t;
  }
  void add(const CompensatedSum& other) {
    add(other.sum);
    add(other.compensation);
  }
  double value() const { return sum + compensation; }
};

struct Partial {
  int64_t empty_rows = 0;
  int64_t min_length = std::numeric_limits<int64_t>::max();
  int64_t max_length = 0;
  u128 squares = 0;  // sum of length^2
  int64_t bandwidth = 0;
  int64_t blocks_16x8 = 0, blocks_16x16 = 0;
  std::array<int64_t, 65> tiles{};  // 8x8 tiles by entry count
  int64_t row_segments = 0;
  CompensatedSum entropy_self, entropy_rest;
};

// Rows per partial: fixed (a multiple of 16, so block rows never straddle two partials); the
// summation order of the entropy terms depends on it, never on the thread count.
constexpr int64_t kBlockRows = 4096;

// Per-thread scratch of the block counting, in one of two modes:
//  - markers (the usual case): entry counts per 8-column group of one 16-row block row, reset
//    after each block row by walking the touched list, so the cost is O(entries), not O(cols);
//    2.5 bytes per 8 columns per thread.
//  - sorting (very wide, hypersparse matrices, where markers would cost more memory than the
//    matrix): the keys (group, half) of the block row's entries are sorted; O(entries log entries),
//    memory O(entries of a block row).
struct Scratch {
  std::vector<uint8_t> top, bottom;  // entries per 8-column group in rows 0-7 / 8-15 of the block row
  std::vector<uint8_t> pair_seen;    // 16-column groups already counted in this block row
  std::vector<int64_t> touched;      // 8-column groups holding entries in this block row
  std::vector<int64_t> keys;         // sorting mode: group * 2 + (row >= 8) of each entry
};

size_t thread_slot(size_t slots) {
#ifdef _OPENMP
  // Inside parallel_chunks' team the number is below the team size (= slots). When the body runs
  // on the calling thread (one thread or one chunk) it is the only body, so any slot is free.
  const size_t t = size_t(omp_get_thread_num());
  return t < slots ? t : 0;
#else
  (void)slots;
  return 0;
#endif
}

struct RowContext {
  const int64_t* ptr;
  const int64_t* col;
  int64_t nnz;
  int64_t strip;  // strip width, clamped to max(cols, 1): the same segments, no overflow
  bool sorting;   // block counting by sorting instead of markers
};

// Ends a row segment of c entries.
inline void add_segment(Partial& part, int64_t c, int64_t nnz) {
  ++part.row_segments;
  const double dc = double(c);
  part.entropy_self.add(dc * std::log(dc));
  part.entropy_rest.add(dc * std::log1p(double(nnz - c) / dc));
}

// Blocks and tiles of a block row from its sorted keys: runs of a key are tiles, changes of the
// group (key / 2) are 16x8 blocks, changes of key / 4 16x16 blocks.
void count_sorted(std::vector<int64_t>& keys, Partial& part) {
  std::sort(keys.begin(), keys.end());
  int64_t last_group = -1, last_pair = -1;
  for (size_t a = 0, b = 0; a < keys.size(); a = b) {
    while (b < keys.size() && keys[b] == keys[a]) ++b;
    ++part.tiles[b - a];  // at most 64
    const int64_t group = keys[a] >> 1;
    if (group == last_group) continue;
    last_group = group;
    ++part.blocks_16x8;
    if (group >> 1 != last_pair) {
      last_pair = group >> 1;
      ++part.blocks_16x16;
    }
  }
}

// Rows [r0, r1) of one block row (r0 a multiple of 16, r1 - r0 <= 16).
void analyze_block_row(const RowContext& m, int64_t r0, int64_t r1, Scratch& sc, Partial& part) {
  sc.touched.clear();
  sc.keys.clear();
  for (int64_t i = r0; i < r1; ++i) {
    const int64_t begin = m.ptr[i], end = m.ptr[i + 1], length = end - begin;
    part.empty_rows += length == 0;
    part.min_length = std::min(part.min_length, length);
    part.max_length = std::max(part.max_length, length);
    part.squares += u128(uint64_t(length)) * uint64_t(length);
    if (length == 0) continue;
    // Columns are sorted: the extremes of the row are its first and last entries.
    const int64_t far = std::max(std::abs(i - m.col[begin]), std::abs(m.col[end - 1] - i));
    part.bandwidth = std::max(part.bandwidth, far);
    const bool lower = i - r0 >= 8;
    uint8_t* count = m.sorting ? nullptr : (lower ? sc.bottom : sc.top).data();
    int64_t strip_end = -1, segment = 0;  // current strip [.., strip_end) and its entries
    for (int64_t k = begin; k < end; ++k) {
      const int64_t j = m.col[k];
      if (j >= strip_end) {
        if (segment > 0) add_segment(part, segment, m.nnz);
        strip_end = (j / m.strip + 1) * m.strip;
        segment = 0;
      }
      ++segment;
      const int64_t g = j >> 3;
      if (m.sorting) {
        sc.keys.push_back(g << 1 | int64_t(lower));
      } else {
        if ((sc.top[size_t(g)] | sc.bottom[size_t(g)]) == 0) sc.touched.push_back(g);
        ++count[g];  // at most 64 per tile
      }
    }
    add_segment(part, segment, m.nnz);
  }
  if (m.sorting) {
    count_sorted(sc.keys, part);
    return;
  }
  part.blocks_16x8 += int64_t(sc.touched.size());
  for (const int64_t g : sc.touched) {
    uint8_t& pair = sc.pair_seen[size_t(g >> 1)];
    part.blocks_16x16 += pair == 0;
    pair = 1;
    uint8_t &top = sc.top[size_t(g)], &bottom = sc.bottom[size_t(g)];
    if (top) ++part.tiles[top];
    if (bottom) ++part.tiles[bottom];
    top = bottom = 0;
  }
  for (const int64_t g : sc.touched) sc.pair_seen[size_t(g >> 1)] = 0;
}

double fill(int64_t nnz, int64_t blocks, int64_t h, int64_t w) {
  return blocks > 0 ? double(nnz) / (double(blocks) * double(h * w)) : 0.0;
}

}  // namespace

Analysis analysis_from_sums(const AnalysisSums& s) {
  Analysis r;
  r.rows = s.rows;
  r.cols = s.cols;
  r.nnz = s.nnz;
  r.density = s.rows > 0 && s.cols > 0 ? double(s.nnz) / (double(s.rows) * double(s.cols)) : 0.0;
  r.products = s.products;
  r.strip_width = s.strip_width;
  if (s.rows > 0) {
    r.empty_rows = s.empty_rows;
    r.nonempty_rows = s.rows - s.empty_rows;
    r.row_length_min = s.row_length_min;
    r.row_length_max = s.row_length_max;
    r.row_length_mean = double(s.nnz) / double(s.rows);
    const u128 squares = u128(s.row_length_squares_hi) << 64 | s.row_length_squares_lo;
    const u128 numerator = u128(s.rows) * squares - u128(s.nnz) * u128(s.nnz);  // >= 0 (Cauchy-Schwarz)
    r.row_length_std = std::sqrt(double(numerator)) / double(s.rows);
    r.bandwidth = s.bandwidth;
  }

  // Blocks and tiles.
  r.blocks_16x8 = s.blocks_16x8;
  r.blocks_16x16 = s.blocks_16x16;
  int64_t tiles = 0, entries = 0, squares = 0;
  for (int64_t c = 1; c <= 64; ++c) {
    tiles += s.tile_histogram[c];
    entries += c * s.tile_histogram[c];
    squares += c * c * s.tile_histogram[c];
  }
  r.blocks_8x8 = tiles;
  r.fill_16x8 = fill(s.nnz, s.blocks_16x8, 16, 8);
  r.fill_16x16 = fill(s.nnz, s.blocks_16x16, 16, 16);
  r.fill_8x8 = fill(s.nnz, tiles, 8, 8);
  if (tiles > 0) {
    auto kth = [&](int64_t k) {  // the k-th smallest count, k zero-based
      int64_t seen = 0;
      for (int64_t c = 1; c <= 64; ++c) {
        seen += s.tile_histogram[c];
        if (k < seen) return c;
      }
      return int64_t(64);
    };
    r.tile_density_median = tiles % 2 == 1 ? double(kth(tiles / 2)) / 64.0
                                           : double(kth(tiles / 2 - 1) + kth(tiles / 2)) / 128.0;
    r.tile_density_mean = double(entries) / (double(tiles) * 64.0);  // = fill_8x8 (entries == nnz)
    const u128 numerator =
        u128(uint64_t(tiles)) * uint64_t(squares) - u128(uint64_t(entries)) * uint64_t(entries);
    r.tile_density_std = std::sqrt(double(numerator)) / (double(tiles) * 64.0);
  }

  // DCSR statistics.
  const int64_t strips = s.cols / s.strip_width + (s.cols % s.strip_width != 0);
  r.nonempty_rows_per_strip_mean = strips > 0 ? double(s.row_segments) / double(strips) : 0.0;
  double h_norm = 0, one_minus_h = 1;
  if (s.nnz > 1) {
    const double scale = double(s.nnz) * std::log(double(s.nnz));
    if (s.entropy_self <= s.entropy_rest) {
      one_minus_h = std::clamp(s.entropy_self / scale, 0.0, 1.0);
      h_norm = 1.0 - one_minus_h;
    } else {
      h_norm = std::clamp(s.entropy_rest / scale, 0.0, 1.0);
      one_minus_h = 1.0 - h_norm;
    }
  }
  r.h_norm = h_norm;
  if (s.rows > 0 && s.nnz > 0 && s.row_segments > 0) {
    const double n = double(s.rows);
    r.ssf = (double(r.nonempty_rows) / n) / (r.nonempty_rows_per_strip_mean / n) * (double(s.nnz) / n) *
            one_minus_h;
  }
  return r;
}

template <typename V>
Analysis cpu_analyze(const CsrMatrix<V>& A, const CsrMatrix<V>* B, int threads, int64_t strip_width) {
  require(A.rows >= 0 && A.cols >= 0 && int64_t(A.row_ptr.size()) == A.rows + 1 && A.row_ptr.back() == A.nnz(),
          SPARSETC_STATUS_INVALID_VALUE, "A's CSR arrays are inconsistent (", A.rows, "x", A.cols, ", ",
          A.row_ptr.size(), " row offsets, ", A.col_idx.size(), " indices)");
  require(strip_width >= 0, SPARSETC_STATUS_INVALID_VALUE, "strip_width must be >= 0 (0 for the default ",
          kDefaultStripWidth, "), got ", strip_width);
  AnalysisSums s;
  s.rows = A.rows;
  s.cols = A.cols;
  s.nnz = A.nnz();
  s.strip_width = strip_width > 0 ? strip_width : kDefaultStripWidth;
  if (B != nullptr) s.products = cpu_count_products(A, *B, threads);
  if (A.rows == 0) return analysis_from_sums(s);

  const int64_t blocks = (A.rows + kBlockRows - 1) / kBlockRows;
  std::vector<Partial> partials(static_cast<size_t>(blocks));
  std::vector<Scratch> slots(size_t(resolve_threads(threads)));
  const int64_t groups8 = (A.cols + 7) / 8, groups16 = (A.cols + 15) / 16;
  // Markers unless they would take more than a few bytes per stored entry (all threads together).
  const bool sorting = groups8 > std::max<int64_t>(int64_t(1) << 16, s.nnz / int64_t(slots.size()));
  const RowContext context{A.row_ptr.data(), A.col_idx.data(), s.nnz,
                           std::min(s.strip_width, std::max<int64_t>(A.cols, 1)), sorting};
  std::mutex error_mutex;
  std::exception_ptr error;
  // parallel_chunks hands out multiples of kBlockRows (or everything at once with one thread):
  // each body walks its range block by block. Bodies must not throw: a failure (allocating the
  // scratch) is kept and rethrown afterwards.
  parallel_chunks(A.rows, threads, kBlockRows, [&](int64_t begin, int64_t end) {
    try {
      Scratch& sc = slots[thread_slot(slots.size())];
      if (!sorting && sc.top.size() != size_t(groups8)) {
        sc.top.assign(size_t(groups8), 0);
        sc.bottom.assign(size_t(groups8), 0);
        sc.pair_seen.assign(size_t(groups16), 0);
      }
      for (int64_t b0 = begin; b0 < end; b0 += kBlockRows) {
        Partial& part = partials[size_t(b0 / kBlockRows)];
        const int64_t b1 = std::min(end, b0 + kBlockRows);
        for (int64_t r0 = b0; r0 < b1; r0 += 16) analyze_block_row(context, r0, std::min(b1, r0 + 16), sc, part);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  });
  if (error) std::rethrow_exception(error);

  Partial total;
  for (const Partial& part : partials) {
    total.empty_rows += part.empty_rows;
    total.min_length = std::min(total.min_length, part.min_length);
    total.max_length = std::max(total.max_length, part.max_length);
    total.squares += part.squares;
    total.bandwidth = std::max(total.bandwidth, part.bandwidth);
    total.blocks_16x8 += part.blocks_16x8;
    total.blocks_16x16 += part.blocks_16x16;
    for (size_t c = 0; c < part.tiles.size(); ++c) total.tiles[c] += part.tiles[c];
    total.row_segments += part.row_segments;
    total.entropy_self.add(part.entropy_self);
    total.entropy_rest.add(part.entropy_rest);
  }
  s.empty_rows = total.empty_rows;
  s.row_length_min = total.min_length;
  s.row_length_max = total.max_length;
  s.row_length_squares_lo = uint64_t(total.squares);
  s.row_length_squares_hi = uint64_t(total.squares >> 64);
  s.bandwidth = total.bandwidth;
  s.blocks_16x8 = total.blocks_16x8;
  s.blocks_16x16 = total.blocks_16x16;
  for (size_t c = 0; c < total.tiles.size(); ++c) s.tile_histogram[c] = total.tiles[c];
  s.row_segments = total.row_segments;
  s.entropy_self = total.entropy_self.value();
  s.entropy_rest = total.entropy_rest.value();
  return analysis_from_sums(s);
}

template Analysis cpu_analyze<float>(const CsrMatrix<float>&, const CsrMatrix<float>*, int, int64_t);
template Analysis cpu_analyze<double>(const CsrMatrix<double>&, const CsrMatrix<double>*, int, int64_t);

}  // namespace sparsetc::detail
