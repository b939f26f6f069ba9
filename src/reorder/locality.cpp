#include "reorder/locality.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

#include "core/error.hpp"

namespace sparsetc::detail::reorder {
namespace {

// The pattern of A + A^T without the diagonal, rows sorted (CSR; int32 rows: at most 2^31 - 1).
struct Graph {
  std::vector<int64_t> ptr;
  std::vector<int32_t> adj;
  int64_t degree(int64_t v) const { return ptr[size_t(v) + 1] - ptr[size_t(v)]; }
};

Graph symmetric_pattern(const Pattern& p) {
  const int64_t rows = p.rows;
  const int64_t *row_ptr = p.row_ptr, *col_idx = p.col_idx;
  // A^T by counting (its rows come out sorted, A's rows being visited in order), then each row of
  // A merged with the same row of A^T, the diagonal and the entries both hold kept once.
  std::vector<int64_t> t_ptr(size_t(rows) + 1, 0);
  for (int64_t e = 0; e < row_ptr[rows]; ++e) {
    const int64_t c = col_idx[e];
    require(c >= 0 && c < rows, SPARSETC_STATUS_INVALID_VALUE, "reverse Cuthill-McKee: column ", c,
            " of a square matrix of ", rows, " rows");
    ++t_ptr[size_t(c) + 1];
  }
  std::partial_sum(t_ptr.begin(), t_ptr.end(), t_ptr.begin());
  std::vector<int32_t> t_idx(size_t(t_ptr.back()));
  std::vector<int64_t> fill(t_ptr.begin(), t_ptr.end() - 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t e = row_ptr[r]; e < row_ptr[r + 1]; ++e) t_idx[size_t(fill[size_t(col_idx[e])]++)] = int32_t(r);
  Graph g;
  g.ptr.assign(size_t(rows) + 1, 0);
  g.adj.reserve(size_t(2 * row_ptr[rows]));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t *a = col_idx + row_ptr[r], *a_end = col_idx + row_ptr[r + 1];
    const int32_t *t = t_idx.data() + t_ptr[size_t(r)], *t_end = t_idx.data() + t_ptr[size_t(r) + 1];
    while (a != a_end || t != t_end) {
      const int64_t c = t == t_end || (a != a_end && *a < *t) ? *a : int64_t(*t);
      while (a != a_end && *a == c) ++a;  // A's rows are sorted (Pattern); a repeated column counts once
      while (t != t_end && *t == c) ++t;
      if (c != r) g.adj.push_back(int32_t(c));
    }
    g.ptr[size_t(r) + 1] = int64_t(g.adj.size());
  }
  return g;
}

// Breadth-first levels from `start` over the unvisited rows (`level` < 0), appending to `order`
// each level's rows by increasing degree (Cuthill-McKee); returns the last level's first index.
size_t cuthill_mckee_from(const Graph& g, int64_t start, std::vector<int32_t>& level, std::vector<int64_t>& order) {
  const size_t begin = order.size();
  level[size_t(start)] = 0;
  order.push_back(start);
  size_t last_level = begin;
  for (size_t head = begin; head < order.size(); ++head) {
    const int64_t v = order[head];
    if (level[size_t(v)] != level[size_t(order[last_level])]) last_level = head;
    const size_t first_new = order.size();
    for (int64_t e = g.ptr[size_t(v)]; e < g.ptr[size_t(v) + 1]; ++e) {
      const int32_t u = g.adj[size_t(e)];
      if (level[size_t(u)] >= 0) continue;
      level[size_t(u)] = level[size_t(v)] + 1;
      order.push_back(u);
    }
    std::stable_sort(order.begin() + std::ptrdiff_t(first_new), order.end(),
                     [&](int64_t a, int64_t b) { return g.degree(a) < g.degree(b); });
  }
  return last_level;
}

}  // namespace

std::vector<int64_t> reverse_cuthill_mckee(const Pattern& a) {
  const int64_t rows = a.rows;
  require(rows <= INT32_MAX, SPARSETC_STATUS_SIZE_OVERFLOW, "reverse Cuthill-McKee: ", rows,
          " rows exceed its int32 adjacency");
  const Graph g = symmetric_pattern(a);
  std::vector<int64_t> by_degree(static_cast<size_t>(rows));
  std::iota(by_degree.begin(), by_degree.end(), int64_t(0));
  std::stable_sort(by_degree.begin(), by_degree.end(), [&](int64_t a, int64_t b) { return g.degree(a) < g.degree(b); });
  std::vector<int32_t> level(size_t(rows), -1);
  std::vector<int64_t> order;
  order.reserve(size_t(rows));
  for (const int64_t seed : by_degree) {
    if (level[size_t(seed)] >= 0) continue;
    // One sweep towards a pseudo-peripheral start: the least-degree row of the farthest level
    // from the component's least-degree row (George and Liu's search, one step of it).
    const size_t begin = order.size();
    const size_t last = cuthill_mckee_from(g, seed, level, order);
    int64_t start = order[last];
    for (size_t i = last; i < order.size(); ++i)
      if (g.degree(order[i]) < g.degree(start)) start = order[i];
    if (start != seed) {
      for (size_t i = begin; i < order.size(); ++i) level[size_t(order[i])] = -1;
      order.resize(begin);
      cuthill_mckee_from(g, start, level, order);
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

std::vector<int64_t> rows_by_first_column(const Pattern& a) {
  // A counting sort by first column (stable; the empty rows in the extra last bucket): linear in
  // rows and columns, where a comparison sort over the rows' first entries took 14 ms on 156k rows.
  std::vector<int64_t> start(size_t(a.cols) + 2, 0);
  auto bucket = [&](int64_t r) {  // rows are sorted: the first entry is the first column
    if (a.row_ptr[r] == a.row_ptr[r + 1]) return a.cols;
    const int64_t c = a.col_idx[a.row_ptr[r]];
    require(c >= 0 && c < a.cols, SPARSETC_STATUS_INVALID_VALUE, "rows by first column: column ", c, " of ", a.cols);
    return c;
  };
  for (int64_t r = 0; r < a.rows; ++r) ++start[size_t(bucket(r)) + 1];
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> order(static_cast<size_t>(a.rows));
  for (int64_t r = 0; r < a.rows; ++r) order[size_t(start[size_t(bucket(r))]++)] = r;
  return order;
}

double window_column_reuse(const Pattern& a, const std::vector<int64_t>& order, int64_t window) {
  require(window > 0, SPARSETC_STATUS_INVALID_VALUE, "window column reuse: window of ", window, " rows");
  require(order.empty() || int64_t(order.size()) == a.rows, SPARSETC_STATUS_INVALID_VALUE,
          "window column reuse: an order of ", order.size(), " rows for ", a.rows);
  const int64_t entries = a.rows > 0 ? a.row_ptr[a.rows] : 0;
  if (entries == 0) return 0.0;
  const Quality q = measure(a, order.empty() ? nullptr : order.data(), {}, window, 1);
  return 1.0 - double(q.blocks) / double(entries);
}

}  // namespace sparsetc::detail::reorder
