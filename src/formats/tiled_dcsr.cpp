// Host (reference) conversions CSR <-> DCSR and CSR <-> tiled DCSR (vertical strips, each a DCSR).
// Parallel passes count into fixed chunks and fill at prefix-summed offsets; the tiled layout is a
// stable counting sort of the row segments by strip, whose result is unique, so the arrays never
// depend on the thread count or the chunking.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "formats/tiled.hpp"

namespace sparsetc::detail {
namespace {

constexpr int64_t kRowChunk = 4096;

// Ceiling division for n >= 0, d >= 1 without forming n + d - 1 (d may be huge).
inline int64_t ceil_div(int64_t n, int64_t d) { return n == 0 ? 0 : (n - 1) / d + 1; }

}  // namespace

template <typename V>
DcsrMatrix<V> csr_to_dcsr(const CsrMatrix<V>& csr) {
  using namespace tiled_internal;
  constexpr const char* op = "csr_to_dcsr";
  check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  require_int32_indices(csr.cols, "columns", op);
  DcsrMatrix<V> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  const int64_t* rp = csr.row_ptr.data();
  const int64_t chunks = ceil_div(csr.rows, kRowChunk);
  std::vector<int64_t> start(size_t(chunks + 1), 0);  // non-empty rows before each chunk
  parallel_chunks(chunks, 0, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t n = 0;
      for (int64_t r = c * kRowChunk; r < std::min(csr.rows, (c + 1) * kRowChunk); ++r) n += rp[r + 1] > rp[r];
      start[size_t(c + 1)] = n;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) start[size_t(c + 1)] += start[size_t(c)];
  const int64_t nonempty = start.back(), nnz = csr.nnz();
  out.row_idx.resize(size_t(nonempty));
  out.row_ptr.resize(size_t(nonempty + 1));
  out.row_ptr[0] = 0;
  out.col_idx.resize(size_t(nnz));
  parallel_chunks(chunks, 0, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      int64_t j = start[size_t(c)];
      for (int64_t r = c * kRowChunk; r < std::min(csr.rows, (c + 1) * kRowChunk); ++r)
        if (rp[r + 1] > rp[r]) {
          out.row_idx[size_t(j)] = r;
          out.row_ptr[size_t(++j)] = rp[r + 1];
        }
    }
  });
  parallel_chunks(nnz, 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) out.col_idx[size_t(k)] = int32_t(csr.col_idx[size_t(k)]);
  });
  out.values = csr.values;
  return out;
}

template <typename V>
CsrMatrix<V> dcsr_to_csr(const DcsrMatrix<V>& dcsr) {
  constexpr const char* op = "dcsr_to_csr";
  require(dcsr.rows >= 0 && dcsr.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, op, ": negative dimension ", dcsr.rows,
          "x", dcsr.cols);
  const int64_t n = int64_t(dcsr.row_idx.size()), nnz = int64_t(dcsr.col_idx.size());
  const std::vector<int64_t>& ptr = dcsr.row_ptr;
  require(int64_t(ptr.size()) == n + 1 && ptr.front() == 0 && ptr.back() == nnz &&
              dcsr.values.size() == dcsr.col_idx.size(),
          SPARSETC_STATUS_INVALID_VALUE, op, ": ", n, " rows listed with ", ptr.size(), " offsets from ",
          ptr.front(), " to ", ptr.back(), ", ", nnz, " column indices and ", dcsr.values.size(), " values");
  const int64_t bad_row = first_where(n, [&](int64_t j) {
    const int64_t r = dcsr.row_idx[size_t(j)];
    return r < 0 || r >= dcsr.rows || (j > 0 && dcsr.row_idx[size_t(j - 1)] >= r) ||
           ptr[size_t(j + 1)] < ptr[size_t(j)];
  });
  require(bad_row < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": listed row ", bad_row,
          " is outside [0, rows), not increasing, or has decreasing offsets");
  const int64_t bad = first_where(n, [&](int64_t j) {
    for (int64_t k = ptr[size_t(j)]; k < ptr[size_t(j + 1)]; ++k) {
      const int64_t c = dcsr.col_idx[size_t(k)];
      if (c < 0 || c >= dcsr.cols || (k > ptr[size_t(j)] && dcsr.col_idx[size_t(k - 1)] >= c)) return true;
    }
    return false;
  });
  require(bad < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": listed row ", bad,
          " has a column outside [0, cols) or columns not increasing");

  CsrMatrix<V> csr;
  csr.rows = dcsr.rows;
  csr.cols = dcsr.cols;
  csr.row_ptr.assign(size_t(dcsr.rows + 1), 0);
  for (int64_t j = 0; j < n; ++j) csr.row_ptr[size_t(dcsr.row_idx[size_t(j)] + 1)] = ptr[size_t(j + 1)] - ptr[size_t(j)];
  for (int64_t r = 0; r < dcsr.rows; ++r) csr.row_ptr[size_t(r + 1)] += csr.row_ptr[size_t(r)];
  csr.col_idx.resize(size_t(nnz));
  parallel_chunks(nnz, 0, kElementChunk, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) csr.col_idx[size_t(k)] = dcsr.col_idx[size_t(k)];
  });
  csr.values = dcsr.values;
  return csr;
}

template <typename V>
TiledDcsr<V> csr_to_tiled_dcsr(const CsrMatrix<V>& csr, int64_t strip_width) {
  using namespace tiled_internal;
  constexpr const char* op = "csr_to_tiled_dcsr";
  check_csr_arrays(csr.rows, csr.cols, csr.row_ptr, csr.col_idx.size(), csr.values.size(), op);
  require(strip_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": strip width ", strip_width,
          " (must be at least 1)");
  require_int32_indices(csr.rows, "rows", op);
  require_int32_indices(csr.cols, "columns", op);
  TiledDcsr<V> out;
  out.rows = csr.rows;
  out.cols = csr.cols;
  out.strip_width = strip_width;
  const int64_t strips = ceil_div(csr.cols, strip_width), rows = csr.rows, nnz = csr.nnz(), sw = strip_width;
  const int64_t* rp = csr.row_ptr.data();
  const int64_t* ci = csr.col_idx.data();

  // Row ranges of balanced weight (entries + rows); per range and strip, the row segments and
  // entries it holds. The chunking only affects speed: the output is a stable sort by strip.
  const int64_t threads = resolve_threads(0);
  const int64_t parts = std::max<int64_t>(
      1, std::min({4 * threads, rows, (nnz + rows) / std::max<int64_t>(strips, 1) + 1}));
  std::vector<int64_t> bound(size_t(parts + 1), rows);
  bound[0] = 0;
  for (int64_t p = 1; p < parts; ++p) {
    const int64_t target = (nnz + rows) / parts * p;
    int64_t lo = 0, hi = rows;  // first r with rp[r] + r >= target
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (rp[mid] + mid < target) lo = mid + 1; else hi = mid;
    }
    bound[size_t(p)] = std::max(lo, bound[size_t(p - 1)]);
  }
  std::vector<int64_t> seg_next(size_t(parts * strips), 0), nz_next(size_t(parts * strips), 0);
  // Calls body(row, strip, first entry, end entry) for every row segment of rows [r0, r1).
  auto for_each_segment = [&](int64_t r0, int64_t r1, auto&& body) {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t k = rp[r], end = rp[r + 1]; k < end;) {
        const int64_t s = ci[k] / sw, base = s * sw;
        int64_t e = k + 1;
        while (e < end && ci[e] - base < sw) ++e;
        body(r, s, k, e);
        k = e;
      }
  };
  parallel_chunks(parts, 0, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      int64_t* seg = seg_next.data() + p * strips;
      int64_t* nz = nz_next.data() + p * strips;
      for_each_segment(bound[size_t(p)], bound[size_t(p + 1)], [&](int64_t, int64_t s, int64_t k, int64_t e) {
        ++seg[s];
        nz[s] += e - k;
      });
    }
  });
  out.strip_ptr.assign(size_t(strips + 1), 0);
  int64_t segments = 0, entries = 0;
  for (int64_t s = 0; s < strips; ++s) {
    out.strip_ptr[size_t(s)] = segments;
    for (int64_t p = 0; p < parts; ++p) {
      const int64_t seg = seg_next[size_t(p * strips + s)], nz = nz_next[size_t(p * strips + s)];
      seg_next[size_t(p * strips + s)] = segments;
      nz_next[size_t(p * strips + s)] = entries;
      segments += seg;
      entries += nz;
    }
  }
  out.strip_ptr[size_t(strips)] = segments;
  out.row_idx.resize(size_t(segments));
  out.row_ptr.resize(size_t(segments + 1));
  out.row_ptr[size_t(segments)] = nnz;
  out.col_idx.resize(size_t(nnz));
  out.values.resize(size_t(nnz));
  parallel_chunks(parts, 0, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      int64_t* seg = seg_next.data() + p * strips;
      int64_t* nz = nz_next.data() + p * strips;
      for_each_segment(bound[size_t(p)], bound[size_t(p + 1)], [&](int64_t r, int64_t s, int64_t k, int64_t e) {
        const int64_t j = seg[s]++;
        int64_t q = nz[s];
        out.row_idx[size_t(j)] = int32_t(r);
        out.row_ptr[size_t(j)] = q;
        for (; k < e; ++k, ++q) {
          out.col_idx[size_t(q)] = int32_t(ci[k]);
          out.values[size_t(q)] = csr.values[size_t(k)];
        }
        nz[s] = q;
      });
    }
  });
  return out;
}

template <typename V>
CsrMatrix<V> tiled_dcsr_to_csr(const TiledDcsr<V>& tiled) {
  constexpr const char* op = "tiled_dcsr_to_csr";
  require(tiled.rows >= 0 && tiled.cols >= 0, SPARSETC_STATUS_INVALID_VALUE, op, ": negative dimension ",
          tiled.rows, "x", tiled.cols);
  require(tiled.strip_width >= 1, SPARSETC_STATUS_INVALID_VALUE, op, ": strip width ", tiled.strip_width);
  const int64_t sw = tiled.strip_width, strips = ceil_div(tiled.cols, sw);
  const int64_t segments = int64_t(tiled.row_idx.size()), nnz = int64_t(tiled.col_idx.size());
  const std::vector<int64_t>& sp = tiled.strip_ptr;
  const std::vector<int64_t>& ptr = tiled.row_ptr;
  require(int64_t(sp.size()) == strips + 1 && sp.front() == 0 && sp.back() == segments,
          SPARSETC_STATUS_INVALID_VALUE, op, ": strip_ptr has ", sp.size(), " entries from ", sp.front(), " to ",
          sp.back(), " for ", strips, " strips and ", segments, " listed rows");
  require(int64_t(ptr.size()) == segments + 1 && ptr.front() == 0 && ptr.back() == nnz &&
              tiled.values.size() == tiled.col_idx.size(),
          SPARSETC_STATUS_INVALID_VALUE, op, ": ", segments, " listed rows with ", ptr.size(), " offsets from ",
          ptr.front(), " to ", ptr.back(), ", ", nnz, " column indices and ", tiled.values.size(), " values");

  const int64_t bad_strip = first_where(strips, [&](int64_t s) { return sp[size_t(s + 1)] < sp[size_t(s)]; });
  require(bad_strip < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": strip_ptr decreases at strip ", bad_strip);
  const int64_t bad_offset = first_where(segments, [&](int64_t j) { return ptr[size_t(j + 1)] < ptr[size_t(j)]; });
  require(bad_offset < 0, SPARSETC_STATUS_INVALID_VALUE, op, ": row_ptr decreases at listed row ", bad_offset);

  CsrMatrix<V> csr;
  csr.rows = tiled.rows;
  csr.cols = tiled.cols;
  csr.row_ptr.assign(size_t(tiled.rows + 1), 0);
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t c0 = s * sw, c1 = c0 + std::min(sw, tiled.cols - c0);
    for (int64_t j = sp[size_t(s)]; j < sp[size_t(s + 1)]; ++j) {
      const int64_t r = tiled.row_idx[size_t(j)];
      require(r >= 0 && r < tiled.rows && (j == sp[size_t(s)] || tiled.row_idx[size_t(j - 1)] < r),
              SPARSETC_STATUS_INVALID_VALUE, op, ": listed row ", j, " (row ", r, " of strip ", s,
              ") is outside [0, rows) or not increasing within its strip");
      for (int64_t k = ptr[size_t(j)]; k < ptr[size_t(j + 1)]; ++k) {
        const int64_t c = tiled.col_idx[size_t(k)];
        require(c >= c0 && c < c1 && (k == ptr[size_t(j)] || tiled.col_idx[size_t(k - 1)] < c),
                SPARSETC_STATUS_INVALID_VALUE, op, ": entry ", k, " (column ", c, ") is outside strip ", s,
                " [", c0, ", ", c1, ") or columns are not increasing in row ", r);
      }
      csr.row_ptr[size_t(r + 1)] += ptr[size_t(j + 1)] - ptr[size_t(j)];
    }
  }
  for (int64_t r = 0; r < tiled.rows; ++r) csr.row_ptr[size_t(r + 1)] += csr.row_ptr[size_t(r)];
  csr.col_idx.resize(size_t(nnz));
  csr.values.resize(size_t(nnz));
  // Strips in increasing column order append to each row in increasing column order.
  std::vector<int64_t> next(csr.row_ptr.begin(), csr.row_ptr.end() - 1);
  for (int64_t j = 0; j < segments; ++j) {
    int64_t q = next[size_t(tiled.row_idx[size_t(j)])];
    for (int64_t k = ptr[size_t(j)]; k < ptr[size_t(j + 1)]; ++k, ++q) {
      csr.col_idx[size_t(q)] = tiled.col_idx[size_t(k)];
      csr.values[size_t(q)] = tiled.values[size_t(k)];
    }
    next[size_t(tiled.row_idx[size_t(j)])] = q;
  }
  return csr;
}

#define SPARSETC_INSTANTIATE(V)                                                 \
  template DcsrMatrix<V> csr_to_dcsr<V>(const CsrMatrix<V>&);                   \
  template CsrMatrix<V> dcsr_to_csr<V>(const DcsrMatrix<V>&);                   \
  template TiledDcsr<V> csr_to_tiled_dcsr<V>(const CsrMatrix<V>&, int64_t);     \
  template CsrMatrix<V> tiled_dcsr_to_csr<V>(const TiledDcsr<V>&);
SPARSETC_INSTANTIATE(float)
SPARSETC_INSTANTIATE(double)
#undef SPARSETC_INSTANTIATE

}  // namespace sparsetc::detail
