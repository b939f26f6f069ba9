// How soon a sparse matrix's entries reuse their columns, taking the entries in their stored order
// (about the order the C-stationary kernel visits them where rows are short). Entry e's gap is the
// number of entries since the previous entry of its column. A cache of B that holds the rows of the
// last W entries at least hits every entry whose gap is below W, so the fraction of gaps below W is
// a lower bound on B's hit rate in a cache of W rows; make_row_schedule compares it at two widths of
// B's rows to decide how wide a column tile to take where B outgrows L2.
#pragma once

#include <array>
#include <cstdint>

#include "gpu/gpu_context.hpp"

namespace sparsetc::detail {

struct ReuseGaps {
  static constexpr int kBins = 32;
  int64_t entries = 0;                // entries looked at
  std::array<int64_t, kBins> bins{};  // bins[b]: entries with a gap in [2^b, 2^(b+1))

  // Fraction of the entries whose gap is below `window` (gaps spread evenly inside a bin).
  double reused_within(double window) const {
    if (entries == 0) return 0.0;
    double below = 0;
    for (int b = 0; b < kBins; ++b) {
      const double lo = double(int64_t(1) << b), hi = 2 * lo;
      if (window >= hi) below += double(bins[size_t(b)]);
      else if (window > lo) below += double(bins[size_t(b)]) * (window - lo) / lo;
    }
    return below / double(entries);
  }
};

// The most entries column_reuse_gaps looks at (the first ones): its sort takes about 24 bytes of
// device memory per entry.
inline constexpr int64_t kReuseGapMaxEntries = int64_t(1) << 24;

// The gaps of the first min(nnz, kReuseGapMaxEntries) entries of col_idx (columns below `cols`),
// on the device (a sort by column); reads 32 counts back (a synchronisation point).
ReuseGaps column_reuse_gaps(const int32_t* col_idx, int64_t nnz, int64_t cols, const GpuContext& context);

}  // namespace sparsetc::detail
