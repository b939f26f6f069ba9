// The fast 1-SA and SA scans. Same output as the oracles (oracle.cpp) for every input; the
// argument is in docs/reordering.md ("Why the fast scan is exact") and in the comments below.
//
// Steps (all but the greedy scan parallel):
//  1. quotient rows: the distinct column blocks of every row (Eq. 4);
//  2. Ashcraft compression: a 64-bit hash and the size of every quotient row, sort, and identical
//     patterns among equal keys become one class (patterns compared on every collision);
//  3. a prefix index: blocks ranked by how many classes hold them (rarest first); class d of
//     size s is listed under its k_d = s - a(s) + t(s) rarest blocks, where a(s) bounds from
//     below the overlap any accepted row of size s has with any pattern (scan_common.hpp) and
//     t(s) = min(a(s), t0(s)) is the count threshold. A block's list is split by the size of the
//     classes (buckets), each part in class order.
//  4. the greedy scan, group by group: cursors on the lists of the group's blocks, read only past
//     the class where the block entered the pattern and only in the size buckets the merge
//     condition can still accept (tau*|P| <= s <= lambda0/(1 - tau/2) for 1-SA). The lists are
//     read tile by tile (8192 classes, counters in L1); a class whose count of prefix blocks in
//     the pattern reaches t(s) is a candidate. Candidates are visited in class order and judged
//     by the oracle's merge condition on the exact overlap (prefix hits + the suffix counted
//     against a bitmap of the pattern). A merge adds the new blocks, whose lists are read from
//     the merged class on.
//  5. speculation: the scan is sequential by nature (a group depends on every earlier group),
//     but a rejected class does not change a group, so the groups of the next K seeds are
//     computed in parallel against the state before the batch and committed in order while
//     none of the classes they take was touched by an earlier commit of the batch.
#include <omp.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <chrono>
#include <climits>
#include <functional>
#include <memory>
#include <numeric>

#include "core/error.hpp"
#include "core/logging.hpp"
#include "core/parallel.hpp"
#include "reorder/reorder.hpp"
#include "reorder/scan_common.hpp"

namespace sparsetc::detail::reorder {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr int64_t kRowChunk = 4096;

// ---------------------------------------------------------------------------------------------
// 1. Quotient rows.

struct QuotientRows {
  int64_t rows = 0, blocks = 0;
  std::vector<int64_t> ptr;   // rows + 1
  std::vector<int32_t> idx;   // distinct block indices, increasing within a row
};

QuotientRows quotient_rows(const Pattern& a, int64_t width, int threads) {
  QuotientRows q;
  q.rows = a.rows;
  q.blocks = a.cols == 0 ? 0 : (a.cols - 1) / width + 1;
  require(q.blocks <= INT32_MAX && a.rows <= INT32_MAX, SPARSETC_STATUS_NOT_SUPPORTED,
          "reordering needs fewer than 2^31 rows and column blocks (", a.rows, " rows, ", q.blocks,
          " column blocks of width ", width, ")");
  q.ptr.assign(size_t(a.rows + 1), 0);
  parallel_chunks(a.rows, threads, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t n = 0, last = -1;
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const int64_t b = a.col_idx[k] / width;
        if (b != last) ++n, last = b;
      }
      q.ptr[size_t(i + 1)] = n;
    }
  });
  for (int64_t i = 0; i < a.rows; ++i) q.ptr[size_t(i + 1)] += q.ptr[size_t(i)];
  q.idx.resize(size_t(q.ptr[size_t(a.rows)]));
  parallel_chunks(a.rows, threads, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      int64_t at = q.ptr[size_t(i)], last = -1;
      for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
        const int64_t b = a.col_idx[k] / width;
        if (b != last) q.idx[size_t(at++)] = int32_t(b), last = b;
      }
    }
  });
  return q;
}

// ---------------------------------------------------------------------------------------------
// 2. Ashcraft compression.

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Classes {
  int64_t count = 0;
  ClassMembers members;
  std::vector<int64_t> ptr;   // class patterns: count + 1
  std::vector<int32_t> idx;
  int64_t collisions = 0;
};

// Sorts in parallel: chunks sorted by threads, then merged pairwise.
template <typename T, typename Less>
void parallel_sort(std::vector<T>& v, int threads, Less less) {
  const int t = std::max(1, std::min(resolve_threads(threads), int(v.size() / 65536) + 1));
  if (t <= 1) {
    std::sort(v.begin(), v.end(), less);
    return;
  }
  std::vector<size_t> bounds(size_t(t + 1));
  for (int k = 0; k <= t; ++k) bounds[size_t(k)] = v.size() * size_t(k) / size_t(t);
#pragma omp parallel for num_threads(t) schedule(static, 1)
  for (int k = 0; k < t; ++k) std::sort(v.begin() + long(bounds[size_t(k)]), v.begin() + long(bounds[size_t(k + 1)]), less);
  for (size_t width = 1; width < size_t(t); width *= 2) {
    const int merges = int((size_t(t) + 2 * width - 1) / (2 * width));
#pragma omp parallel for num_threads(t) schedule(static, 1)
    for (int m = 0; m < merges; ++m) {
      const size_t lo = size_t(m) * 2 * width, mid = std::min(lo + width, size_t(t)), hi = std::min(lo + 2 * width, size_t(t));
      if (mid < hi)
        std::inplace_merge(v.begin() + long(bounds[lo]), v.begin() + long(bounds[mid]), v.begin() + long(bounds[hi]), less);
    }
  }
}

Classes compress(const QuotientRows& q, HashKind kind, int threads) {
  struct Key {
    uint64_t hash;
    int64_t size;
    int64_t row;
  };
  const int64_t n = q.rows;
  std::vector<Key> keys(static_cast<size_t>(n));
  parallel_chunks(n, threads, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      uint64_t h = 0;
      for (int64_t k = q.ptr[size_t(i)]; k < q.ptr[size_t(i + 1)]; ++k)
        h += kind == HashKind::mixed ? mix(uint64_t(q.idx[size_t(k)])) : uint64_t(q.idx[size_t(k)]);
      keys[size_t(i)] = {h, q.ptr[size_t(i + 1)] - q.ptr[size_t(i)], i};
    }
  });
  parallel_sort(keys, threads, [](const Key& x, const Key& y) {
    if (x.hash != y.hash) return x.hash < y.hash;
    if (x.size != y.size) return x.size < y.size;
    return x.row < y.row;
  });
  auto same = [&](int64_t x, int64_t y) {
    const int64_t s = q.ptr[size_t(x + 1)] - q.ptr[size_t(x)];
    return std::equal(q.idx.begin() + q.ptr[size_t(x)], q.idx.begin() + q.ptr[size_t(x)] + s,
                      q.idx.begin() + q.ptr[size_t(y)]);
  };
  // Algorithm 1 inside each run of equal (hash, size): rows in row order, so the first row of a
  // pattern met in its run is its smallest row, the class representative.
  std::vector<int64_t> rep(size_t(n), -1);
  int64_t collisions = 0;
  for (int64_t lo = 0; lo < n;) {
    int64_t hi = lo + 1;
    while (hi < n && keys[size_t(hi)].hash == keys[size_t(lo)].hash && keys[size_t(hi)].size == keys[size_t(lo)].size) ++hi;
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t vi = keys[size_t(i)].row;
      if (rep[size_t(vi)] != -1) continue;
      rep[size_t(vi)] = vi;
      for (int64_t j = i + 1; j < hi; ++j) {
        const int64_t vj = keys[size_t(j)].row;
        if (rep[size_t(vj)] != -1) continue;
        if (same(vi, vj)) rep[size_t(vj)] = vi;
        else ++collisions;
      }
    }
    lo = hi;
  }
  Classes c;
  c.collisions = collisions;
  std::vector<int64_t> class_of(static_cast<size_t>(n));
  std::vector<int64_t> first;
  for (int64_t i = 0; i < n; ++i) {
    if (rep[size_t(i)] == i) {
      class_of[size_t(i)] = int64_t(first.size());
      first.push_back(i);
    } else {
      class_of[size_t(i)] = class_of[size_t(rep[size_t(i)])];  // rep < i
    }
  }
  c.count = int64_t(first.size());
  c.members.ptr.assign(size_t(c.count + 1), 0);
  for (int64_t i = 0; i < n; ++i) c.members.ptr[size_t(class_of[size_t(i)] + 1)]++;
  for (int64_t k = 0; k < c.count; ++k) c.members.ptr[size_t(k + 1)] += c.members.ptr[size_t(k)];
  c.members.members.resize(size_t(n));
  {
    std::vector<int64_t> at(c.members.ptr.begin(), c.members.ptr.end() - 1);
    for (int64_t i = 0; i < n; ++i) c.members.members[size_t(at[size_t(class_of[size_t(i)])]++)] = i;
  }
  c.ptr.assign(size_t(c.count + 1), 0);
  for (int64_t k = 0; k < c.count; ++k)
    c.ptr[size_t(k + 1)] = c.ptr[size_t(k)] + q.ptr[size_t(first[size_t(k)] + 1)] - q.ptr[size_t(first[size_t(k)])];
  c.idx.resize(size_t(c.ptr[size_t(c.count)]));
  parallel_chunks(c.count, threads, kRowChunk, [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k)
      std::copy(q.idx.begin() + q.ptr[size_t(first[size_t(k)])], q.idx.begin() + q.ptr[size_t(first[size_t(k)] + 1)],
                c.idx.begin() + c.ptr[size_t(k)]);
  });
  return c;
}

// ---------------------------------------------------------------------------------------------
// 3. Inverted lists over column blocks, split by the size of the listed class: list (b, bucket)
//    holds the classes of that size bucket with b in their prefix, in increasing class order.
//    A probe reads only the buckets whose sizes the merge condition can still accept.

// Size buckets: exact below 32, then 4 per power of two (ratio <= 1.25). Finer buckets prune
// more in the window but split every list into more segments (more cursors per group).
int size_bucket(int64_t s) {
  if (s < 32) return int(s);
  const int e = 63 - __builtin_clzll(uint64_t(s));  // >= 5
  return 32 + 4 * (e - 5) + int((s >> (e - 2)) - 4);
}
// Smallest and largest size of a bucket.
int64_t bucket_low(int k) {
  if (k < 32) return k;
  const int e = (k - 32) / 4 + 5, m = (k - 32) % 4 + 4;
  return int64_t(m) << (e - 2);
}
int64_t bucket_high(int k) { return bucket_low(k + 1) - 1; }

struct Segment {
  int64_t start;   // into entries
  int32_t length;  // shrinks on compaction
  // Every entry before `head` is a consumed class. Shared by the speculating threads: any value
  // one of them stores is true (consumed stays consumed), so relaxed atomic accesses suffice and
  // a lost update only costs a longer skip.
  mutable int32_t head;
  int32_t bucket;
  int32_t load_head() const { return __atomic_load_n(&head, __ATOMIC_RELAXED); }
  void store_head(int32_t h) const { __atomic_store_n(&head, h, __ATOMIC_RELAXED); }
};

struct Lists {
  // Segments of block b: segments[seg_ptr[b] .. seg_ptr[b+1]), in increasing bucket order; one
  // block's segments are adjacent (a cursor opening touches few cache lines).
  std::vector<int64_t> seg_ptr;
  std::vector<Segment> segments;
  std::vector<int32_t> entries;

  // Drops the classes without remaining rows.
  void compact(const std::vector<int64_t>& remaining, int threads) {
    const int64_t count = int64_t(segments.size());
    parallel_chunks(count, threads, 1024, [&](int64_t begin, int64_t end) {
      for (int64_t g = begin; g < end; ++g) {
        Segment& seg = segments[size_t(g)];
        int32_t* e = entries.data() + seg.start;
        int32_t kept = 0;
        for (int32_t k = 0; k < seg.length; ++k)
          if (remaining[size_t(e[k])] > 0) e[kept++] = e[k];
        seg.length = kept;
        seg.head = 0;
      }
    });
  }
};

// Lists of the entries (class d, block idx[k]) for k in [ptr[d], ptr[d+1]): a counting sort by
// block (classes stay in order), then each block's entries stably sorted by size bucket.
Lists build_lists(int64_t classes, int64_t blocks, const std::vector<int64_t>& class_ptr,
                  const std::vector<int64_t>& ptr, const std::vector<int32_t>& idx, int threads) {
  std::vector<uint8_t> bucket(static_cast<size_t>(classes));
  for (int64_t d = 0; d < classes; ++d) bucket[size_t(d)] = uint8_t(size_bucket(class_ptr[size_t(d + 1)] - class_ptr[size_t(d)]));
  auto bucket_of = [&](int32_t d) { return int(bucket[size_t(d)]); };
  std::vector<int64_t> start(size_t(blocks + 1), 0);
  for (int64_t k = 0; k < ptr[size_t(classes)]; ++k) start[size_t(idx[size_t(k)] + 1)]++;
  for (int64_t b = 0; b < blocks; ++b) start[size_t(b + 1)] += start[size_t(b)];
  Lists l;
  l.entries.resize(size_t(start[size_t(blocks)]));
  {
    std::vector<int64_t> at(start.begin(), start.end() - 1);
    for (int64_t d = 0; d < classes; ++d)
      for (int64_t k = ptr[size_t(d)]; k < ptr[size_t(d + 1)]; ++k)
        l.entries[size_t(at[size_t(idx[size_t(k)])]++)] = int32_t(d);
  }
  // Segments per block: counted in parallel, then laid out.
  std::vector<int64_t> segments(size_t(blocks + 1), 0);
  parallel_chunks(blocks, threads, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      int32_t* first = l.entries.data() + start[size_t(b)];
      int32_t* last = l.entries.data() + start[size_t(b + 1)];
      // (bucket, class) is a total order: the same result as a stable sort by bucket.
      std::sort(first, last, [&](int32_t x, int32_t y) {
        return bucket_of(x) != bucket_of(y) ? bucket_of(x) < bucket_of(y) : x < y;
      });
      int64_t n = 0;
      for (int32_t* it = first; it != last; ++it) n += it == first || bucket_of(*it) != bucket_of(*(it - 1));
      segments[size_t(b + 1)] = n;
    }
  });
  for (int64_t b = 0; b < blocks; ++b) segments[size_t(b + 1)] += segments[size_t(b)];
  l.seg_ptr = segments;
  l.segments.resize(size_t(segments[size_t(blocks)]));
  parallel_chunks(blocks, threads, 1024, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      int64_t g = segments[size_t(b)] - 1;
      for (int64_t k = start[size_t(b)]; k < start[size_t(b + 1)]; ++k) {
        const int bucket = bucket_of(l.entries[size_t(k)]);
        if (k == start[size_t(b)] || bucket != l.segments[size_t(g)].bucket) {
          ++g;
          l.segments[size_t(g)] = Segment{k, 0, 0, bucket};
        }
        l.segments[size_t(g)].length++;
      }
    }
  });
  return l;
}

// ---------------------------------------------------------------------------------------------
// Classes that still have rows: a two-level bitset (find the next one from any position).

class LiveSet {
 public:
  explicit LiveSet(int64_t n) : n_(n), words_(size_t((n + 63) / 64), 0), summary_(size_t((n + 4095) / 4096), 0) {
    for (int64_t i = 0; i < n; ++i) set(i);
  }
  void set(int64_t i) {
    words_[size_t(i >> 6)] |= uint64_t(1) << (i & 63);
    summary_[size_t(i >> 12)] |= uint64_t(1) << ((i >> 6) & 63);
  }
  bool has(int64_t i) const { return (words_[size_t(i >> 6)] >> (i & 63)) & 1; }
  void clear(int64_t i) {
    uint64_t& w = words_[size_t(i >> 6)];
    w &= ~(uint64_t(1) << (i & 63));
    if (w == 0) summary_[size_t(i >> 12)] &= ~(uint64_t(1) << ((i >> 6) & 63));
  }
  // Smallest live index >= i, or n.
  int64_t next(int64_t i) const {
    if (i >= n_) return n_;
    int64_t w = i >> 6;
    uint64_t bits = words_[size_t(w)] & (~uint64_t(0) << (i & 63));
    if (bits) return (w << 6) + __builtin_ctzll(bits);
    ++w;
    int64_t s = w >> 6;
    if (s >= int64_t(summary_.size())) return n_;
    uint64_t sbits = summary_[size_t(s)] & ((w & 63) ? (~uint64_t(0) << (w & 63)) : ~uint64_t(0));
    while (!sbits) {
      if (++s >= int64_t(summary_.size())) return n_;
      sbits = summary_[size_t(s)];
    }
    w = (s << 6) + __builtin_ctzll(sbits);
    return (w << 6) + __builtin_ctzll(words_[size_t(w)]);
  }

 private:
  int64_t n_;
  std::vector<uint64_t> words_, summary_;
};

// ---------------------------------------------------------------------------------------------
// 4./5. The scan.

struct GroupResult {
  std::vector<GroupItem> items;
};

struct Cursor {
  const int32_t* it;
  const int32_t* end;
};

// Classes per tile of the list reads: the tile's counters (32 KiB) stay in L1.
constexpr int64_t kTile = 8192;
// Longest indexed prefix: counts are 16 bits (signed in the vector scan). A longer one (a row of
// more than ~98k column blocks) is not indexed; such a class is a candidate of every group whose
// size window holds it.
constexpr int64_t kMaxPrefix = 32767;
// A tile expected to hold at least this many list entries is counted densely: a plain increment
// per entry into a zeroed tile array, then a vector scan for counts at their thresholds (merges
// continue the scan from the merged class); the scan and the zeroing cost about as much as this
// many entries. Sparser tiles: epoch counters that test the threshold per entry.
constexpr double kDenseEntries = kTile / 8;

struct Workspace {
  std::vector<Cursor> cursors;
  std::vector<uint64_t> in_pattern;  // bit per block: in the group's pattern (cleared after the group)
  // Per class: epoch << 24 | threshold << 16 | prefix blocks counted in the pattern. A count from
  // an older epoch (group) reads as 0, so nothing is reset between groups; every 255 groups the
  // epochs are cleared.
  std::vector<uint32_t> counter;
  uint32_t epoch = 0;
  std::vector<uint16_t> dense;     // kTile counts of the current dense tile, zero between tiles
  std::vector<int32_t> heap;       // candidates (min-heap on the class)
  std::vector<int32_t> pattern;
  std::vector<int32_t> class_tag;  // padding: classes already in the group or ranked
  int32_t ctag = 0;
  std::vector<std::pair<int32_t, Similarity>> ranked;
  int64_t counter_updates = 0, candidates = 0;

  bool has(int32_t b) const { return (in_pattern[size_t(b) >> 6] >> (b & 63)) & 1; }
  void clear_pattern() {
    for (int32_t b : pattern) in_pattern[size_t(b) >> 6] &= ~(uint64_t(1) << (b & 63));
    pattern.clear();
  }
  void next_epoch() {
    if (++epoch == 256) {
      for (uint32_t& k : counter) k &= 0x00FFFFFFu;
      epoch = 1;
    }
  }
  void next_ctag() {
    if (++ctag == INT32_MAX) {
      std::fill(class_tag.begin(), class_tag.end(), 0);
      ctag = 1;
    }
  }
};

class Scanner {
 public:
  Scanner(const Classes& cls, int64_t blocks, Method method, const Options& o)
      : cls_(cls), blocks_(blocks), method_(method), o_(o), one_sa_(method == Method::one_sa),
        cap_(height_cap(o)), remaining_(size_t(cls.count)), live_(cls.count), modified_(size_t(cls.count), -1) {
    for (int64_t c = 0; c < cls.count; ++c)
      remaining_[size_t(c)] = cls.members.ptr[size_t(c + 1)] - cls.members.ptr[size_t(c)];
  }

  void build_index(Stats& stats) {
    const int64_t C = cls_.count;
    // Global block order: rarest first (classes holding the block), ties by block index.
    std::vector<int64_t> freq(size_t(blocks_), 0);
    for (int32_t b : cls_.idx) freq[size_t(b)]++;
    std::vector<int32_t> order(static_cast<size_t>(blocks_));
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
      return freq[size_t(x)] != freq[size_t(y)] ? freq[size_t(x)] < freq[size_t(y)] : x < y;
    });
    std::vector<int32_t> rank(static_cast<size_t>(blocks_));
    for (int64_t r = 0; r < blocks_; ++r) rank[size_t(order[size_t(r)])] = int32_t(r);
    // Prefix of every class: its k_d = s - a(s) + t(s) rarest blocks.
    threshold_.assign(size_t(C), 1);
    std::vector<int64_t> prefix_ptr(size_t(C + 1), 0);
    huge_.clear();
    for (int64_t d = 0; d < C; ++d) {
      const int64_t s = size(d), a = min_overlap(method_, o_.tau, s);
      const int64_t t = std::max<int64_t>(1, std::min<int64_t>(a, slack(s, a)));
      threshold_[size_t(d)] = uint8_t(t);
      int64_t k = s == 0 ? 0 : s - a + t;
      if (k > std::min<int64_t>(kMaxPrefix, o_.max_indexed_prefix)) {  // counts would not fit 16 bits
        huge_.push_back(int32_t(d));
        k = 0;
      }
      prefix_ptr[size_t(d + 1)] = prefix_ptr[size_t(d)] + k;
    }
    threshold16_.assign(threshold_.begin(), threshold_.end());
    // Every class's blocks, its prefix first: the visit counts only the suffix (the prefix hits
    // are the class's counter).
    ranked_.resize(cls_.idx.size());
    prefix_length_.resize(size_t(C));
    std::vector<int32_t> prefix(size_t(prefix_ptr[size_t(C)]));
    parallel_chunks(C, o_.threads, kRowChunk, [&](int64_t begin, int64_t end) {
      for (int64_t d = begin; d < end; ++d) {
        const int64_t k = prefix_ptr[size_t(d + 1)] - prefix_ptr[size_t(d)];
        prefix_length_[size_t(d)] = int32_t(k);
        int32_t* first = ranked_.data() + cls_.ptr[size_t(d)];
        int32_t* last = ranked_.data() + cls_.ptr[size_t(d + 1)];
        std::copy(cls_.idx.begin() + cls_.ptr[size_t(d)], cls_.idx.begin() + cls_.ptr[size_t(d + 1)], first);
        if (k == 0) continue;
        auto by_rank = [&](int32_t x, int32_t y) { return rank[size_t(x)] < rank[size_t(y)]; };
        if (k < last - first) std::nth_element(first, first + (k - 1), last, by_rank);
        std::copy(first, first + k, prefix.begin() + prefix_ptr[size_t(d)]);
      }
    });
    prefix_lists_ = build_lists(C, blocks_, cls_.ptr, prefix_ptr, prefix, o_.threads);
    stats.index_entries = int64_t(prefix_lists_.entries.size());
    if (o_.pad_groups) full_lists_ = build_lists(C, blocks_, cls_.ptr, cls_.ptr, cls_.idx, o_.threads);
  }

  Groups run(Stats& stats) {
    const int threads = resolve_threads(o_.threads);
    std::vector<Workspace> ws(static_cast<size_t>(threads));
    for (auto& w : ws) {
      w.in_pattern.assign(size_t((blocks_ + 63) / 64), 0);
      w.dense.assign(size_t(kTile), 0);
      w.counter.resize(size_t(cls_.count));
      for (int64_t d = 0; d < cls_.count; ++d) w.counter[size_t(d)] = uint32_t(threshold_[size_t(d)]) << 16;
      if (o_.pad_groups) w.class_tag.assign(size_t(cls_.count), 0);
    }
    Groups groups;
    // Speculation: batches of `batch` seeds. Doubles while every group holds; drops to sequential
    // (1) when fewer than half hold, and tries again after a sequential stretch that doubles on
    // every failure (band and stencil matrices: the next seeds join the current group).
    const bool adaptive = o_.speculation <= 0 && threads > 1;
    const int max_batch = 1024;
    int batch = o_.speculation > 0 ? o_.speculation : (threads > 1 ? threads : 1);
    int64_t sequential_left = 0, sequential_stretch = 64;
    std::vector<int64_t> seeds;
    std::vector<GroupResult> results;
    int64_t consumed_since_compaction = 0, live_at_compaction = cls_.count;
    int64_t cursor = 0;  // all classes before it are consumed
    for (int64_t batch_id = 0;; ++batch_id) {
      cursor = live_.next(cursor);
      if (cursor >= cls_.count) break;
      const int want = adaptive && sequential_left > 0 ? 1 : batch;
      seeds.clear();
      for (int64_t c = cursor; c < cls_.count && int(seeds.size()) < want; c = live_.next(c + 1)) seeds.push_back(c);
      if (results.size() < seeds.size()) results.resize(seeds.size());
      const int k = int(seeds.size());
      if (k == 1 || threads == 1) {
        for (int i = 0; i < k; ++i) compute(seeds[size_t(i)], ws[0], results[size_t(i)]);
      } else {
#pragma omp parallel for num_threads(std::min(threads, k)) schedule(dynamic, 1)
        for (int i = 0; i < k; ++i) compute(seeds[size_t(i)], ws[size_t(omp_get_thread_num())], results[size_t(i)]);
      }
      // Commit in seed order while the speculation holds.
      int committed = 0;
      for (int i = 0; i < k; ++i) {
        const int64_t next = live_.next(cursor);
        if (next != seeds[size_t(i)]) {
          if (next > seeds[size_t(i)]) continue;  // this seed was consumed by an earlier group
          break;                                  // an earlier seed keeps rows: it opens the next group
        }
        bool valid = true;
        for (const GroupItem& item : results[size_t(i)].items)
          if (modified_[size_t(item.cls)] == batch_id) valid = false;
        if (!valid) break;
        for (const GroupItem& item : results[size_t(i)].items) {
          int64_t& r = remaining_[size_t(item.cls)];
          r -= item.count;
          modified_[size_t(item.cls)] = batch_id;
          if (r == 0) live_.clear(item.cls), ++consumed_since_compaction;
          groups.items.push_back(item);
        }
        groups.ptr.push_back(int64_t(groups.items.size()));
        ++committed;
        cursor = seeds[size_t(i)];
      }
      stats.batches++;
      stats.speculated += k;
      stats.committed += committed;
      if (adaptive) {
        if (k == 1) {
          --sequential_left;
        } else if (committed == k) {
          batch = std::min(max_batch, batch * 2);
          sequential_stretch = 64;
        } else if (k > threads && 2 * committed >= k) {
          batch = std::max(threads, batch / 2);
        } else {
          batch = threads;
          sequential_left = sequential_stretch;
          sequential_stretch = std::min<int64_t>(sequential_stretch * 2, int64_t(1) << 16);
        }
      }
      if (consumed_since_compaction * 4 > live_at_compaction && consumed_since_compaction > 4096) {
        prefix_lists_.compact(remaining_, o_.threads);
        if (o_.pad_groups) full_lists_.compact(remaining_, o_.threads);
        live_at_compaction -= consumed_since_compaction;
        consumed_since_compaction = 0;
      }
    }
    for (const auto& w : ws) {
      stats.counter_updates += w.counter_updates;
      stats.candidates += w.candidates;
    }
    return groups;
  }

 private:
  int64_t size(int64_t d) const { return cls_.ptr[size_t(d + 1)] - cls_.ptr[size_t(d)]; }

  // t0(s): count threshold of the prefix index. 1 for short rows (their prefix then avoids the
  // frequent blocks); longer rows get a longer prefix and need more hits, fewer false candidates.
  int64_t slack(int64_t s, int64_t a) const {
    if (o_.prefix_slack > 0) return std::min<int64_t>(o_.prefix_slack, 255);
    return std::clamp<int64_t>(1 + (s - a) / 8, 1, 32);
  }

  // Sizes of the rows the condition can still accept. 1-SA: I <= s and I >= tau*U >= tau*p, and
  // s <= U <= lambda0/(1 - tau/2); p only grows, so a row below the bound now stays below it.
  // SA: tau^2 s0 <= s <= s0 / tau^2. Margins keep the window wider than the floating-point test.
  std::pair<int64_t, int64_t> size_window(int64_t p, int64_t lambda0) const {
    const double tau = o_.tau;
    double lo, hi;
    if (one_sa_) {
      lo = tau * double(p);
      hi = double(lambda0) / (1.0 - 0.5 * tau);
    } else {
      lo = tau * tau * double(lambda0);
      hi = double(lambda0) / (tau * tau);
    }
    const int64_t l = int64_t(std::floor(lo * (1 - 1e-9) - 1e-9));
    const double h = std::floor(hi * (1 + 1e-9) + 1e-9);
    return {std::max<int64_t>(l, 1), h > 4e18 ? INT64_MAX : int64_t(h)};
  }

  // A block of the pattern entered at class `from`: cursors on its list segments past `from`, in
  // the size buckets that overlap the window.
  void open_cursors(Workspace& w, int32_t b, int64_t from, std::pair<int64_t, int64_t> window, bool seed) const {
    const Lists& l = prefix_lists_;
    const Segment* g = l.segments.data() + l.seg_ptr[size_t(b)];
    const Segment* const last = l.segments.data() + l.seg_ptr[size_t(b + 1)];
    // First segment whose bucket reaches the window (segments are in bucket order).
    while (g != last && bucket_high(g->bucket) < window.first) ++g;
    for (; g != last; ++g) {
      if (bucket_low(g->bucket) > window.second) break;
      const int32_t* first = l.entries.data() + g->start;
      const int32_t* end = first + g->length;
      const int32_t* it;
      if (seed) {
        // Every class before the seed is consumed but other seeds of the batch: walk from the
        // head past consumed classes and classes <= from, and move the head to the first live one.
        const int32_t* at = first + g->load_head();
        const int32_t* live = nullptr;
        while (at != end && (*at <= from || !live_.has(*at))) {
          if (!live && live_.has(*at)) live = at;
          ++at;
        }
        g->store_head(int32_t((live ? live : at) - first));
        it = at;
      } else {
        it = std::upper_bound(first, end, int32_t(from));
      }
      if (it != end) w.cursors.push_back({it, end});
    }
  }

  // Starts loading what opening the cursors of these blocks reads (their segments, then their
  // first entries), so the misses overlap instead of queueing one behind the other.
  void prefetch_blocks(const int32_t* blocks, size_t n) const {
    const Lists& l = prefix_lists_;
    for (size_t k = 0; k < n; ++k) __builtin_prefetch(&l.seg_ptr[size_t(blocks[k])]);
    for (size_t k = 0; k < n; ++k) __builtin_prefetch(l.segments.data() + l.seg_ptr[size_t(blocks[k])]);
    for (size_t k = 0; k < n; ++k) {
      const Segment& g = l.segments[size_t(l.seg_ptr[size_t(blocks[k])])];
      if (l.seg_ptr[size_t(blocks[k]) + 1] > l.seg_ptr[size_t(blocks[k])])
        __builtin_prefetch(l.entries.data() + g.start + g.load_head());
    }
  }

  // Counts the entries of a cursor below `limit` (one tile); a class whose count reaches its
  // threshold is appended to the candidates (the caller restores the heap). The tile's counters
  // stay in L1; no branch but the rare candidate one.
  void advance(Workspace& w, Cursor& cur, int32_t limit) const {
    const int32_t* it = cur.it;
    const int32_t* const end = cur.end;
    uint32_t* const counter = w.counter.data();
    const uint32_t epoch = w.epoch << 24;
    const int32_t* const start = it;
    for (; it != end; ++it) {
      const int32_t d = *it;
      if (d >= limit) break;
      uint32_t k = counter[d];
      k = (k & 0xFF000000u) == epoch ? k : (epoch | (k & 0x00FF0000u));
      ++k;
      counter[d] = k;
      if ((k & 0xFFFFu) == ((k >> 16) & 0xFFu)) append(w, d, cls_.ptr.data());
    }
    w.counter_updates += it - start;
    cur.it = it;
    prefetch_next_tile(it, end);
  }
  // A candidate: its pattern offsets are read when it is visited, after the tile's counting.
  __attribute__((noinline)) static void append(Workspace& w, int32_t d, const int64_t* class_ptr) {
    w.heap.push_back(d);
    __builtin_prefetch(class_ptr + d);
  }

  // Advances the cursors [from, end) to the tile limit, dropping exhausted ones, and restores the
  // candidate heap over what they appended.
  void advance_all(Workspace& w, size_t from, int32_t limit) const {
    const size_t before = w.heap.size();
    for (size_t k = from; k < w.cursors.size();) {
      advance(w, w.cursors[k], limit);
      if (w.cursors[k].it == w.cursors[k].end) {
        w.cursors[k] = w.cursors.back();
        w.cursors.pop_back();
      } else {
        ++k;
      }
    }
    if (w.heap.size() - before > 8) {
      std::make_heap(w.heap.begin(), w.heap.end(), std::greater<int32_t>());
    } else {
      for (size_t k = before + 1; k <= w.heap.size(); ++k)
        std::push_heap(w.heap.begin(), w.heap.begin() + long(k), std::greater<int32_t>());
    }
  }

  // Dense tile: one increment per entry below `limit`.
  static void advance_dense(Workspace& w, Cursor& cur, int32_t limit, int32_t tile_start) {
    const int32_t* it = cur.it;
    const int32_t* const end = cur.end;
    uint16_t* const count = w.dense.data() - tile_start;
    const int32_t* const start = it;
    for (; it != end; ++it) {
      const int32_t d = *it;
      if (d >= limit) break;
      ++count[d];
    }
    w.counter_updates += it - start;
    cur.it = it;
    prefetch_next_tile(it, end);
  }
  // The cursor's run in the next tile begins at `it`: start loading it now (lists live in L3, and
  // every run's first line would otherwise be a miss).
  static void prefetch_next_tile(const int32_t* it, const int32_t* end) {
    for (int k = 0; k < 3 && it + 16 * k < end; ++k) __builtin_prefetch(it + 16 * k);
  }
  static void advance_all_dense(Workspace& w, size_t from, int32_t limit, int32_t tile_start) {
    for (size_t k = from; k < w.cursors.size();) {
      advance_dense(w, w.cursors[k], limit, tile_start);
      if (w.cursors[k].it == w.cursors[k].end) {
        w.cursors[k] = w.cursors.back();
        w.cursors.pop_back();
      } else {
        ++k;
      }
    }
  }
  // First class in [from, limit) of the dense tile whose count reached its threshold, or limit.
  int32_t scan_dense(const Workspace& w, int32_t from, int32_t limit, int32_t tile_start) const {
    const uint16_t* count = w.dense.data() - tile_start;
    const uint16_t* thr = threshold16_.data();
    int32_t i = from;
#ifdef __SSE2__
    for (; i < limit && (i - tile_start) % 8 != 0; ++i)
      if (count[i] >= thr[i]) return i;
    for (; i + 8 <= limit; i += 8) {
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(count + i));
      const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(thr + i));
      const int below = _mm_movemask_epi8(_mm_cmplt_epi16(c, t));  // counts < 2^15
      if (below != 0xFFFF) return i + __builtin_ctz(unsigned(~below) & 0xFFFFu) / 2;
    }
#endif
    for (; i < limit; ++i)
      if (count[i] >= thr[i]) return i;
    return limit;
  }

  void add_to_pattern(Workspace& w, int32_t b) {
    w.in_pattern[size_t(b) >> 6] |= uint64_t(1) << (b & 63);
    w.pattern.push_back(b);
  }

  int64_t overlap(const Workspace& w, int64_t d) const {
    int64_t I = 0;
    for (int64_t k = cls_.ptr[size_t(d)]; k < cls_.ptr[size_t(d + 1)]; ++k) I += w.has(cls_.idx[size_t(k)]);
    return I;
  }

  // Whether class d joins, given its prefix blocks found in the pattern (exact at the visit: every
  // block of the pattern had its list read past d, in d's size bucket, or d is outside the window).
  // The smallest accepted overlap for (p, s) first (the conditions are monotone in I), then the
  // suffix counted with an early exit once the overlap cannot reach it.
  bool accepts(const Workspace& w, int64_t d, int64_t p, int64_t lambda0, int64_t prefix_hits) const {
    const int64_t s = size(d), top = std::min(p, s);
    auto ok = [&](int64_t I) {
      return one_sa_ ? one_sa_accepts(o_.tau, I, p, s, lambda0) : sa_accepts(o_.tau, I, lambda0, s);
    };
    if (top < 1 || !ok(top)) return false;
    double guess;
    if (one_sa_) {
      const double jac = o_.tau * double(p + s) / (1.0 + o_.tau);
      const double den = double(p + s) - double(lambda0) / (1.0 - 0.5 * o_.tau);
      guess = std::max(jac, den);
    } else {
      guess = o_.tau * std::sqrt(double(lambda0) * double(s));
    }
    int64_t need = std::clamp<int64_t>(int64_t(std::ceil(guess)), 1, top);
    while (need > 1 && ok(need - 1)) --need;
    while (!ok(need)) ++need;  // ok(top) holds
    const int64_t k = prefix_length_[size_t(d)];
    int64_t I = prefix_hits, left = s - k;
    if (I + left < need) return false;
    const int32_t* suffix = ranked_.data() + cls_.ptr[size_t(d)] + k;
    for (int64_t j = 0; j < s - k; ++j) {
      I += w.has(suffix[j]);
      if (I + --left < need) return false;
    }
    return ok(I);
  }

  // The group opened by class c against the committed state (read only here).
  void compute(int64_t c, Workspace& w, GroupResult& out) {
    out.items.clear();
    w.next_epoch();
    w.cursors.clear();
    w.heap.clear();
    int64_t height = 0;
    auto take = [&](int64_t d, int64_t limit) {
      const int64_t t = std::min(remaining_[size_t(d)], limit - height);
      height += t;
      out.items.push_back({int32_t(d), t});
    };
    take(c, cap_);
    for (int64_t k = cls_.ptr[size_t(c)]; k < cls_.ptr[size_t(c + 1)]; ++k) add_to_pattern(w, cls_.idx[size_t(k)]);
    const int64_t lambda0 = int64_t(w.pattern.size());
    if (height < cap_ && lambda0 > 0) {
      {
        const auto window = size_window(lambda0, lambda0);
        prefetch_blocks(w.pattern.data(), w.pattern.size());
        for (size_t k = 0; k < size_t(lambda0); ++k) open_cursors(w, w.pattern[k], c, window, true);
        // Classes too long for the index: candidates of every group whose window holds them.
        for (int32_t d : huge_)
          if (d > c && size(d) <= window.second) w.heap.push_back(d);
        std::make_heap(w.heap.begin(), w.heap.end(), std::greater<int32_t>());
      }
      int32_t last = -1;  // a class can be a candidate twice (huge, or a count passing its threshold again)
      bool full = false;
      // Visits candidate d: the same decision as the oracle's; a merge grows the pattern and opens
      // cursors for the new blocks from d on. Returns whether the group is full.
      auto visit = [&](int32_t d, int32_t limit, bool dense, int32_t tile_start) {
        // Prefix hits so far (a huge class has no prefix; its counters stay at 0).
        const uint32_t k = w.counter[size_t(d)];
        const int64_t hits = dense ? w.dense[size_t(d - tile_start)]
                                   : ((k >> 24) == w.epoch ? int64_t(k & 0xFFFFu) : 0);
        if (d == last) return false;
        last = d;
        if (!live_.has(d)) return false;  // consumed, not yet compacted out of the lists
        const int64_t s = size(d), p = int64_t(w.pattern.size());
        const auto window = size_window(p, lambda0);
        if (s < window.first || s > window.second) return false;
        ++w.candidates;
        if (!accepts(w, d, p, lambda0, hits)) return false;
        take(d, cap_);
        if (height >= cap_) return true;
        if (one_sa_) {
          const size_t before = w.pattern.size();
          for (int64_t k = cls_.ptr[size_t(d)]; k < cls_.ptr[size_t(d + 1)]; ++k) {
            const int32_t b = cls_.idx[size_t(k)];
            if (!w.has(b)) add_to_pattern(w, b);
          }
          const auto grown = size_window(int64_t(w.pattern.size()), lambda0);
          const size_t opened = w.cursors.size();
          for (size_t k = before; k < w.pattern.size(); ++k) open_cursors(w, w.pattern[k], d, grown, false);
          if (dense) advance_all_dense(w, opened, limit, tile_start);
          else advance_all(w, opened, limit);
        }
        return false;
      };
      // Tile by tile, in class order: count the tile's entries of every cursor, then visit its
      // candidates in order; a merge opens cursors for the new blocks, read at once to the tile end.
      while (!full) {
        int32_t lowest = w.heap.empty() ? INT32_MAX : w.heap.front();
        double expected = 0;  // entries in the tile, if every list is spread evenly over the classes left
        for (const Cursor& cur : w.cursors) {
          lowest = std::min(lowest, *cur.it);
          expected += double(cur.end - cur.it) / double(cls_.count - *cur.it);
        }
        if (lowest == INT32_MAX) break;
        const int32_t tile_start = int32_t(int64_t(lowest) / kTile * kTile);
        const int32_t limit = int32_t(std::min<int64_t>(int64_t(tile_start) + kTile, cls_.count));
        if (expected * double(limit - tile_start) >= kDenseEntries) {
          advance_all_dense(w, 0, limit, tile_start);
          for (int32_t pos = std::max<int32_t>(tile_start, int32_t(c + 1)); !full;) {
            const int32_t from_scan = scan_dense(w, pos, limit, tile_start);
            const int32_t from_heap = !w.heap.empty() && w.heap.front() < limit ? w.heap.front() : limit;
            const int32_t d = std::min(from_scan, from_heap);
            if (d == limit) break;
            if (d == from_heap) {
              std::pop_heap(w.heap.begin(), w.heap.end(), std::greater<int32_t>());
              w.heap.pop_back();
            }
            pos = d + 1;
            full = visit(d, limit, true, tile_start);
          }
          std::fill(w.dense.begin(), w.dense.begin() + (limit - tile_start), uint16_t(0));
        } else {
          advance_all(w, 0, limit);
          while (!full && !w.heap.empty() && w.heap.front() < limit) {
            std::pop_heap(w.heap.begin(), w.heap.end(), std::greater<int32_t>());
            const int32_t d = w.heap.back();
            w.heap.pop_back();
            if (!w.heap.empty()) __builtin_prefetch(cls_.idx.data() + cls_.ptr[size_t(w.heap.front())]);
            full = visit(d, limit, false, tile_start);
          }
        }
      }
    }
    const int64_t target = pad_target(o_, height);
    if (target > height) pad(c, w, out, height, target);
    w.clear_pattern();
  }

  // Padding: the remaining classes sharing a block with the final pattern, by similarity, then
  // the earliest remaining classes (similarity 0).
  void pad(int64_t c, Workspace& w, GroupResult& out, int64_t& height, int64_t target) {
    w.next_ctag();
    for (const GroupItem& item : out.items) w.class_tag[size_t(item.cls)] = w.ctag;
    w.ranked.clear();
    const int64_t p = int64_t(w.pattern.size());
    const Lists& l = full_lists_;
    for (int32_t b : w.pattern) {
      for (int64_t g = l.seg_ptr[size_t(b)]; g < l.seg_ptr[size_t(b + 1)]; ++g) {
        const int32_t* first = l.entries.data() + l.segments[size_t(g)].start;
        const int32_t* end = first + l.segments[size_t(g)].length;
        for (const int32_t* it = std::upper_bound(first, end, int32_t(c)); it != end; ++it) {
          const int32_t d = *it;
          if (remaining_[size_t(d)] == 0 || w.class_tag[size_t(d)] == w.ctag) continue;
          w.class_tag[size_t(d)] = w.ctag;
          const int64_t s = size(d), I = overlap(w, d);
          w.ranked.push_back({d, Similarity{I, s, p + s - I}});
        }
      }
    }
    std::sort(w.ranked.begin(), w.ranked.end(), [&](const auto& x, const auto& y) {
      return ranks_before(one_sa_, x.second, x.first, y.second, y.first);
    });
    auto take = [&](int64_t d) {
      const int64_t t = std::min(remaining_[size_t(d)], target - height);
      height += t;
      out.items.push_back({int32_t(d), t});
    };
    for (size_t k = 0; k < w.ranked.size() && height < target; ++k) take(w.ranked[k].first);
    for (int64_t d = live_.next(c + 1); d < cls_.count && height < target; d = live_.next(d + 1))
      if (w.class_tag[size_t(d)] != w.ctag) take(d);
  }

  const Classes& cls_;
  int64_t blocks_;
  Method method_;
  Options o_;
  bool one_sa_;
  int64_t cap_;
  std::vector<int64_t> remaining_;
  LiveSet live_;
  std::vector<int64_t> modified_;  // batch that last changed the class
  std::vector<uint8_t> threshold_;
  std::vector<uint16_t> threshold16_;  // the same, for the vector scan of dense tiles
  std::vector<int32_t> huge_;  // classes whose prefix is longer than kMaxPrefix (not indexed)
  std::vector<int32_t> ranked_;         // class blocks (offsets cls_.ptr), the prefix first
  std::vector<int32_t> prefix_length_;  // per class
  Lists prefix_lists_, full_lists_;
};

Blocking fast_scan(const Pattern& a, Method method, const Options& options, Stats* stats_out) {
  check_options(options);
  Stats stats;
  const auto t0 = Clock::now();
  auto t = t0;
  const QuotientRows q = quotient_rows(a, method == Method::one_sa ? options.block_width : 1, options.threads);
  stats.seconds_quotient = seconds_since(t);
  t = Clock::now();
  const Classes cls = compress(q, options.hash, options.threads);
  stats.classes = cls.count;
  stats.hash_collisions = cls.collisions;
  stats.seconds_compress = seconds_since(t);
  t = Clock::now();
  Scanner scanner(cls, q.blocks, method, options);
  scanner.build_index(stats);
  stats.seconds_index = seconds_since(t);
  t = Clock::now();
  const Groups groups = scanner.run(stats);
  stats.seconds_scan = seconds_since(t);
  Blocking out = expand(groups, cls.members, a.rows);
  stats.seconds_total = seconds_since(t0);
  SPARSETC_LOG(debug, method == Method::one_sa ? "1-SA" : "SA", " on ", a.rows, " rows: ", cls.count, " classes (",
               cls.collisions, " hash collisions), ", out.groups(), " groups, ", stats.candidates, " candidates, ",
               stats.counter_updates, " list reads, ", stats.committed, "/", stats.speculated, " speculative groups kept in ",
               stats.batches, " batches; ", stats.seconds_total, " s");
  if (stats_out) *stats_out = stats;
  return out;
}

}  // namespace

void check_options(const Options& o) {
  require(o.tau > 0 && o.tau <= 1, SPARSETC_STATUS_INVALID_VALUE, "tau must be in (0, 1], got ", o.tau);
  require(o.block_width >= 1, SPARSETC_STATUS_INVALID_VALUE, "block_width must be >= 1, got ", o.block_width);
  require(o.block_height >= 1, SPARSETC_STATUS_INVALID_VALUE, "block_height must be >= 1, got ", o.block_height);
  require(o.max_group_height >= 0, SPARSETC_STATUS_INVALID_VALUE, "max_group_height must be >= 0 (0: unlimited), got ",
          o.max_group_height);
}

Blocking one_sa(const Pattern& a, const Options& options, Stats* stats) {
  return fast_scan(a, Method::one_sa, options, stats);
}
Blocking sa(const Pattern& a, const Options& options, Stats* stats) { return fast_scan(a, Method::sa, options, stats); }

}  // namespace sparsetc::detail::reorder
