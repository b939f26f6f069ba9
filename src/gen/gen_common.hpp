// Internals shared by the generators (src/gen/*.cpp only): a portable random number generator,
// counter-based values, sampling without replacement, size checks and a parallel loop.
//
// Determinism: every random choice comes from xoshiro256** streams keyed by (seed, purpose, id)
// through splitmix64, and every value from a hash of (seed, row, column). No <random>
// distribution is used (their output is implementation-defined), doubles are built from raw bits,
// and no result depends on which thread ran what, so a (spec, seed) pair gives a bit-identical
// matrix on every platform and with any number of threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <unordered_set>
#include <vector>

#include "core/error.hpp"
#include "formats/sparse.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace sparsetc::detail::gen {

// Largest number of stored entries (and of rows) a generator accepts.
constexpr int64_t kMaxEntries = int64_t(1) << 40;

// Purposes of random streams: the same (seed, id) gives unrelated streams for different purposes.
enum StreamTag : uint64_t {
  kTagValues = 0x76616c7565730001ull,
  kTagUniformRow = 0x756e69666f726d01ull,
  kTagRmatBlock = 0x726d6174626c6b01ull,
  kTagBlockPick = 0x626c6b7069636b01ull,
  kTagBlockFill = 0x626c6b66696c6c01ull,
  kTagBlockScramble = 0x626c6b7363726101ull,
};

// splitmix64's output function: a bijection of 64-bit words with good avalanche.
inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Key of the stream (seed, tag, id).
inline uint64_t stream_key(uint64_t seed, uint64_t tag, uint64_t id) {
  uint64_t h = mix64(seed + 0x9e3779b97f4a7c15ull);
  h = mix64(h ^ (tag + 0x632be59bd9b4e019ull));
  return mix64(h ^ (id + 0x8cb92ba72f3d8dd7ull));
}

// xoshiro256** (Blackman and Vigna), seeded from a key through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t key) {
    uint64_t x = key;
    for (auto& w : s_) {
      x += 0x9e3779b97f4a7c15ull;
      w = mix64(x);
    }
  }
  Rng(uint64_t seed, uint64_t tag, uint64_t id) : Rng(stream_key(seed, tag, id)) {}

  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n), n >= 1, unbiased (rejection of the short last interval).
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }
  // 53 random bits: uniform in [0, 2^53).
  uint64_t bits53() { return next() >> 11; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

// The value stored at (row, col): magnitude uniform in [0.5, 1.5) on a grid of 2^-52, random sign.
// Counter-based, so it does not depend on the order entries are generated in.
inline double value_at(uint64_t value_key, int64_t row, int64_t col) {
  uint64_t h = mix64(value_key ^ (uint64_t(row) + 0x9e3779b97f4a7c15ull));
  h = mix64(h ^ (uint64_t(col) * 0xd1342543de82ef95ull + 0x2545f4914f6cdd1dull));
  const double magnitude = 0.5 + double(h >> 12) * 0x1p-52;  // exact: [0.5, 1.5 - 2^-52]
  return (h & 1) ? -magnitude : magnitude;
}
inline uint64_t value_key(uint64_t seed) { return stream_key(seed, kTagValues, 0); }

// Saturating arithmetic for size checks: results are capped at 2^62.
constexpr int64_t kSaturated = int64_t(1) << 62;
inline int64_t sat_mul(int64_t a, int64_t b) {  // a, b >= 0
  if (a == 0 || b == 0) return 0;
  if (a > kSaturated / b) return kSaturated;
  return std::min(a * b, kSaturated);
}
inline int64_t sat_add(int64_t a, int64_t b) { return std::min(kSaturated, a + std::min(b, kSaturated)); }

// Scratch buffers of sample_sorted, one per thread.
struct SampleScratch {
  std::vector<uint64_t> bits;
  std::unordered_set<uint64_t> set;
};

// Writes k distinct values of [0, n), sorted increasingly, uniformly chosen among all k-subsets,
// to out[0..k). 0 <= k <= n. Uses Floyd's algorithm (k draws); the membership structure is chosen
// from (n, k) alone, so the result is a deterministic function of (n, k, rng state).
inline void sample_sorted(uint64_t n, uint64_t k, Rng& rng, int64_t* out, SampleScratch& scratch) {
  if (k == 0) return;
  if (k == n) {
    for (uint64_t i = 0; i < n; ++i) out[i] = int64_t(i);
    return;
  }
  if (k <= 16) {
    // Floyd with the output kept sorted: each step either inserts t where it belongs, or appends j
    // when t is already there (j exceeds every value chosen so far).
    uint64_t m = 0;
    for (uint64_t j = n - k; j < n; ++j) {
      const int64_t t = int64_t(rng.below(j + 1));
      uint64_t pos = m;
      while (pos > 0 && out[pos - 1] > t) --pos;
      if (pos > 0 && out[pos - 1] == t) {
        out[m++] = int64_t(j);
      } else {
        for (uint64_t q = m; q > pos; --q) out[q] = out[q - 1];
        out[pos] = t;
        ++m;
      }
    }
    return;
  }
  if (n / 64 <= k) {
    // Dense: a bitmap of [0, n); Floyd picks the k members, or the n - k non-members when fewer.
    const bool complement = k > n / 2;
    const uint64_t pick = complement ? n - k : k;
    auto& bits = scratch.bits;
    bits.assign(size_t((n + 63) / 64), 0);
    for (uint64_t j = n - pick; j < n; ++j) {
      const uint64_t t = rng.below(j + 1);
      const uint64_t chosen = (bits[t >> 6] >> (t & 63)) & 1 ? j : t;
      bits[chosen >> 6] |= uint64_t(1) << (chosen & 63);
    }
    uint64_t m = 0;
    for (uint64_t i = 0; i < n; ++i)
      if ((((bits[i >> 6] >> (i & 63)) & 1) != 0) != complement) out[m++] = int64_t(i);
    return;
  }
  // Sparse: Floyd with a hash set, then a sort.
  auto& set = scratch.set;
  set.clear();
  set.reserve(size_t(k) * 2);
  uint64_t m = 0;
  for (uint64_t j = n - k; j < n; ++j) {
    const uint64_t t = rng.below(j + 1);
    const uint64_t chosen = set.insert(t).second ? t : j;
    if (chosen == j) set.insert(j);
    out[m++] = int64_t(chosen);
  }
  std::sort(out, out + k);
}

// Threads a parallel region would use.
inline int omp_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// for (i in [0, n)) body(i, scratch) over OpenMP threads, dynamically scheduled in chunks of
// `grain`, with one default-constructed Scratch per thread. The first exception thrown by a body
// is rethrown after the loop (the remaining iterations are skipped).
template <typename Scratch, typename Body>
void parallel_for(int64_t n, int64_t grain, Body&& body) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
#ifdef _OPENMP
#pragma omp parallel if (n > grain)
#endif
  {
    Scratch scratch{};
#ifdef _OPENMP
#pragma omp for schedule(dynamic, grain)
#endif
    for (int64_t i = 0; i < n; ++i) {
      if (failed.load(std::memory_order_relaxed)) continue;
      try {
        body(i, scratch);
      } catch (...) {
#ifdef _OPENMP
#pragma omp critical(sparsetc_gen_error)
#endif
        {
          if (!error) error = std::current_exception();
        }
        failed.store(true, std::memory_order_relaxed);
      }
    }
  }
  if (error) std::rethrow_exception(error);
}
struct NoScratch {};

// Builds a CSR matrix whose row i has row_length(i) entries, written in increasing column order
// by fill_row(i, int64_t* columns, Scratch&); values come from value_at(seed, i, column).
template <typename Scratch, typename LengthFn, typename FillFn>
CsrMatrix<double> build_by_rows(int64_t rows, int64_t cols, uint64_t seed, LengthFn&& row_length, FillFn&& fill_row) {
  CsrMatrix<double> m;
  m.rows = rows;
  m.cols = cols;
  m.row_ptr.assign(size_t(rows + 1), 0);
  for (int64_t i = 0; i < rows; ++i) m.row_ptr[size_t(i + 1)] = m.row_ptr[size_t(i)] + row_length(i);
  const int64_t nnz = m.row_ptr[size_t(rows)];
  m.col_idx.resize(size_t(nnz));
  m.values.resize(size_t(nnz));
  const uint64_t vkey = value_key(seed);
  parallel_for<Scratch>(rows, 256, [&](int64_t i, Scratch& scratch) {
    const int64_t begin = m.row_ptr[size_t(i)], end = m.row_ptr[size_t(i + 1)];
    fill_row(i, m.col_idx.data() + begin, scratch);
    for (int64_t p = begin; p < end; ++p) m.values[size_t(p)] = value_at(vkey, i, m.col_idx[size_t(p)]);
  });
  return m;
}

}  // namespace sparsetc::detail::gen
