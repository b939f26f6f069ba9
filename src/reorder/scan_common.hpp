// Pieces shared by the fast scan and the oracle: the merge conditions, the similarity order used
// by padding, and the expansion of groups of compressed rows into a row permutation. The merge
// conditions are the specification; both scans call these same functions, so they decide every
// (pattern, row) pair identically and differ only in which pairs they visit.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "reorder/reorder.hpp"

namespace sparsetc::detail::reorder {

// ---- merge conditions (paper Sec. 3.2). I = |P ∩ v|, p = |P|, s = |v|, lambda0 = |first row|.

// 1-SA: Jaccard(P, v) >= tau and |P ∪ v| <= lambda0 / (1 - tau/2). I >= 1: an empty row never
// joins (its similarity is 0/|P|) and the empty class never takes a row.
inline bool one_sa_accepts(double tau, int64_t I, int64_t p, int64_t s, int64_t lambda0) {
  const int64_t U = p + s - I;
  return I >= 1 && double(I) >= tau * double(U) && double(U) <= double(lambda0) / (1.0 - 0.5 * tau);
}

// SA: cosine(first row, v) >= tau against the group's first row (no pattern update, no density rule).
inline bool sa_accepts(double tau, int64_t I, int64_t s0, int64_t s) {
  return I >= 1 && double(I) >= tau * std::sqrt(double(s0) * double(s));
}

// ---- padding order: higher similarity first, then the earlier compressed row.
// 1-SA: Jaccard I/U against the final pattern; SA: cosine against the first row (same s0 for all,
// so I/sqrt(s) decides). Compared exactly in integers.
struct Similarity {
  int64_t I = 0, s = 0, U = 0;  // U used by 1-SA only
};
inline bool ranks_before(bool jaccard, const Similarity& a, int64_t class_a, const Similarity& b, int64_t class_b) {
  // Similarity 0 (no common block; an empty row has 0/0) ranks after every positive one.
  if ((a.I > 0) != (b.I > 0)) return a.I > 0;
  if (a.I == 0) return class_a < class_b;
  if (jaccard) {
    const __int128 l = __int128(a.I) * b.U, r = __int128(b.I) * a.U;  // a.I/a.U vs b.I/b.U
    if (l != r) return l > r;
  } else {
    const __int128 l = __int128(a.I) * a.I * b.s, r = __int128(b.I) * b.I * a.s;  // a.I^2/a.s vs b.I^2/b.s
    if (l != r) return l > r;
  }
  return class_a < class_b;
}

// ---- lower bounds on the overlap I of any row of s blocks that the condition can accept, for
// any pattern. 1-SA: I >= tau*U >= tau*s, and with p = |P| >= lambda0 both
// I >= tau(p+s)/(1+tau) (Jaccard) and I >= s - p*tau/(2-tau) (density) hold; the first grows and
// the second falls with p, and they cross at I = 2s/3, so I >= max(tau, 2/3) * s.
// SA: I <= s0 and I >= tau*sqrt(s0*s) give s0 >= tau^2 s, so I >= tau^2 * s.
// A small relative margin keeps the bound below any value the floating-point test can accept.
inline int64_t min_overlap(Method method, double tau, int64_t s) {
  if (s <= 0) return 0;
  const double f = method == Method::sa ? tau * tau : (tau > 2.0 / 3.0 ? tau : 2.0 / 3.0);
  const double x = f * double(s);
  int64_t a = int64_t(std::ceil(x - 1e-9 * (x + 1.0)));
  if (a < 1) a = 1;
  if (a > s) a = s;
  return a;
}

// ---- groups of compressed rows: items (class, rows taken) in the order they joined.
struct GroupItem {
  int32_t cls;
  int64_t count;
};
struct Groups {
  std::vector<int64_t> ptr{0};  // groups + 1, into items
  std::vector<GroupItem> items;
};

// Classes: compressed rows in increasing order of their first member.
struct ClassMembers {
  std::vector<int64_t> ptr{0};     // classes + 1
  std::vector<int64_t> members;    // rows, increasing within a class
};

// Expands groups to the row permutation: a class gives its members in increasing row order, a
// class split between groups gives its first remaining members to the earlier group.
inline Blocking expand(const Groups& groups, const ClassMembers& classes, int64_t rows) {
  Blocking out;
  out.permutation.reserve(size_t(rows));
  out.group_ptr.assign(1, 0);
  std::vector<int64_t> cursor(classes.ptr.begin(), classes.ptr.end() - 1);
  for (size_t g = 0; g + 1 < groups.ptr.size(); ++g) {
    for (int64_t k = groups.ptr[g]; k < groups.ptr[g + 1]; ++k) {
      const GroupItem& item = groups.items[size_t(k)];
      int64_t& c = cursor[size_t(item.cls)];
      for (int64_t t = 0; t < item.count; ++t) out.permutation.push_back(classes.members[size_t(c++)]);
    }
    out.group_ptr.push_back(int64_t(out.permutation.size()));
  }
  return out;
}

// The height a group is padded to (Options::pad_groups), never above the maximum height.
inline int64_t pad_target(const Options& o, int64_t height) {
  if (!o.pad_groups || o.block_height <= 1 || height % o.block_height == 0) return height;
  int64_t target = (height / o.block_height + 1) * o.block_height;
  if (o.max_group_height > 0 && target > o.max_group_height) target = o.max_group_height;
  return target < height ? height : target;
}

inline int64_t height_cap(const Options& o) {
  return o.max_group_height > 0 ? o.max_group_height : std::numeric_limits<int64_t>::max();
}

}  // namespace sparsetc::detail::reorder
