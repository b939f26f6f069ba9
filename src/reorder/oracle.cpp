// The exhaustive scans: what the paper's pseudocode says, written as plainly as possible, with
// no index, no filter and no parallelism. O(C^2 k) for C compressed rows of k blocks. They are the
// test oracles of the fast scans (fast.cpp), which must return exactly the same groups.
//
//   Algorithm 1 (compression): hash every quotient row with Eq. (5), h(v) = sum of its block
//   indices; sort the rows by hash (stably, so rows of equal hash stay in row order); walk them,
//   and give each not-yet-grouped row every later row of equal hash with an identical pattern
//   (the collision check). A compressed row is a class of identical quotient rows; classes are
//   visited in the order of their first (smallest) row.
//
//   Algorithm 2 (1-SA): for each class in order that still has rows, open a group with it
//   (pattern P = its quotient row, lambda0 = |P|); then for every later class j in order that
//   still has rows, in one forward pass: if MergeCondition(P, v_j) then merge j and P = OR(P, v_j).
//   A class rejected at its turn is not revisited in this group, even if P grows later (the
//   paper's loop over j is a single pass).
//
// Extensions (docs/reordering.md): a maximum group height stops the pass once the group is full
// (a class that does not fit entirely gives its first rows and keeps the rest, so the next group
// starts at the same class again); padding tops a group up to a multiple of the block height with
// the remaining classes of highest similarity to the final pattern (ties: earlier class).
// SA is the same loop with cosine similarity against the group's first row, on exact columns
// (width 1), no pattern update and no density rule.
#include <algorithm>
#include <numeric>

#include "core/error.hpp"
#include "reorder/reorder.hpp"
#include "reorder/scan_common.hpp"

namespace sparsetc::detail::reorder {
namespace {

using Row = std::vector<int64_t>;  // sorted block indices

// The quotient rows, Eq. (4): block j of row i is non-zero when row i has an entry in it.
std::vector<Row> quotient(const Pattern& a, int64_t width) {
  std::vector<Row> rows(static_cast<size_t>(a.rows));
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const int64_t block = a.col_idx[k] / width;
      if (rows[size_t(i)].empty() || rows[size_t(i)].back() != block) rows[size_t(i)].push_back(block);
    }
  return rows;
}

int64_t intersection(const Row& x, const Row& y) {
  int64_t n = 0;
  for (size_t i = 0, j = 0; i < x.size() && j < y.size();) {
    if (x[i] < y[j]) ++i;
    else if (y[j] < x[i]) ++j;
    else ++n, ++i, ++j;
  }
  return n;
}

Row join(const Row& x, const Row& y) {
  Row u;
  std::set_union(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(u));
  return u;
}

// Algorithm 1 with the hash of Eq. (5).
struct Compressed {
  ClassMembers members;
  std::vector<Row> pattern;  // per class
};
Compressed compress(const std::vector<Row>& rows) {
  const int64_t n = int64_t(rows.size());
  std::vector<int64_t> h(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t b : rows[size_t(i)]) h[size_t(i)] += b;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return h[size_t(x)] < h[size_t(y)]; });
  std::vector<int64_t> group(size_t(n), -1);  // the representative row of each row
  for (int64_t i = 0; i < n; ++i) {
    const int64_t vi = order[size_t(i)];
    if (group[size_t(vi)] != -1) continue;
    group[size_t(vi)] = vi;
    for (int64_t j = i + 1; j < n; ++j) {
      const int64_t vj = order[size_t(j)];
      if (h[size_t(vj)] != h[size_t(vi)]) break;
      if (group[size_t(vj)] == -1 && rows[size_t(vj)] == rows[size_t(vi)]) group[size_t(vj)] = vi;
    }
  }
  // Classes numbered in the order of their first row; members in row order.
  Compressed out;
  std::vector<int64_t> class_of_rep(size_t(n), -1);
  std::vector<std::vector<int64_t>> members;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t rep = group[size_t(i)];
    if (class_of_rep[size_t(rep)] == -1) {
      class_of_rep[size_t(rep)] = int64_t(members.size());
      members.emplace_back();
      out.pattern.push_back(rows[size_t(rep)]);
    }
    members[size_t(class_of_rep[size_t(rep)])].push_back(i);
  }
  for (const auto& m : members) {
    out.members.members.insert(out.members.members.end(), m.begin(), m.end());
    out.members.ptr.push_back(int64_t(out.members.members.size()));
  }
  return out;
}

Blocking scan(const Pattern& a, const Options& o, bool one_sa) {
  check_options(o);
  const Compressed cls = compress(quotient(a, one_sa ? o.block_width : 1));
  const int64_t C = int64_t(cls.pattern.size());
  std::vector<int64_t> remaining(static_cast<size_t>(C));
  for (int64_t c = 0; c < C; ++c) remaining[size_t(c)] = cls.members.ptr[size_t(c + 1)] - cls.members.ptr[size_t(c)];
  const int64_t cap = height_cap(o);

  Groups groups;
  for (int64_t i = 0; i < C; ++i) {
    while (remaining[size_t(i)] > 0) {  // a class split by the height cap opens the next group too
      int64_t height = 0;
      auto take = [&](int64_t c, int64_t limit) {
        const int64_t t = std::min(remaining[size_t(c)], limit - height);
        remaining[size_t(c)] -= t;
        height += t;
        groups.items.push_back({int32_t(c), t});
      };
      take(i, cap);                                // group[i] = i
      Row pattern = cls.pattern[size_t(i)];        // ThisPattern = v_i
      const int64_t lambda0 = int64_t(pattern.size());
      for (int64_t j = i + 1; j < C && height < cap; ++j) {
        if (remaining[size_t(j)] == 0) continue;   // group[j] != -1
        const Row& v = cls.pattern[size_t(j)];
        const int64_t I = intersection(pattern, v);
        const bool merge = one_sa ? one_sa_accepts(o.tau, I, int64_t(pattern.size()), int64_t(v.size()), lambda0)
                                  : sa_accepts(o.tau, I, lambda0, int64_t(v.size()));
        if (!merge) continue;
        take(j, cap);                              // group[j] = i
        if (one_sa) pattern = join(pattern, v);    // thisPattern = OR(thisPattern, v_j)
      }
      const int64_t target = pad_target(o, height);
      if (target > height) {
        std::vector<std::pair<int64_t, Similarity>> candidates;
        for (int64_t j = 0; j < C; ++j) {
          if (remaining[size_t(j)] == 0) continue;
          const Row& v = cls.pattern[size_t(j)];
          const int64_t I = intersection(pattern, v), s = int64_t(v.size());
          candidates.push_back({j, Similarity{I, s, int64_t(pattern.size()) + s - I}});
        }
        std::sort(candidates.begin(), candidates.end(), [&](const auto& x, const auto& y) {
          return ranks_before(one_sa, x.second, x.first, y.second, y.first);
        });
        for (size_t k = 0; k < candidates.size() && height < target; ++k) take(candidates[k].first, target);
      }
      groups.ptr.push_back(int64_t(groups.items.size()));
    }
  }
  return expand(groups, cls.members, a.rows);
}

}  // namespace

Blocking one_sa_oracle(const Pattern& a, const Options& options) { return scan(a, options, true); }
Blocking sa_oracle(const Pattern& a, const Options& options) { return scan(a, options, false); }

}  // namespace sparsetc::detail::reorder
