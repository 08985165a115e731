// lockstep/study/quantile_sketch.hpp — the mergeable quantile sketch of one statistics slice, for
// ensembles whose values do not fit the exact quantiles' memory budget (study/statistics.hpp).
//
// A deterministic mergeable quantile sketch: a weighted sample of the slice's values in the
// spirit of Manku, Rajagopalan & Lindsay (1998, SIGMOD, "collapse" of weighted buffers) and Agarwal et
// al. (2012, PODS, "Mergeable summaries"), merged in the fixed combination tree of the ensemble
// statistics (study/fixed_pairwise_tree.hpp), as the moments are.
//   * Leaf: the block's values of the slice, sorted, weight 1 each. Node: the two children's items
//     merged in sorted order (std::merge), weights kept. Whenever a leaf or node holds more than k
//     items it is compacted to at most k: with total weight n and cumulative weights C_i, item i is
//     kept when C_i k >= j n for a not yet reached j = 1..k (the first item past each multiple of n/k);
//     the weight of the dropped items between two kept items goes to the next kept item ("down"
//     compaction) or, mirrored, to the previous one ("up"); down and up alternate with the parity of the
//     node's index in its tree level so that their errors, of opposite sign, do not pile up on one side.
//   * Rank error. For a set of items with values <= x (or < x) — always a prefix of the sorted items —
//     the summary's weight R'(x) differs from the true count R(x) only through compactions. A down
//     compaction gives R - R' in [0, G] and an up compaction R' - R in [0, G], G the largest total weight
//     dropped between two kept items (recorded exactly at run time), and G < n_node / k because C
//     crosses a multiple of n_node / k at every kept item. Merging adds the children's errors. So
//     -E_up <= R - R' <= E_down with E_down, E_up the sums of G over the down and up compactions of the
//     slice, and with E = max(E_down, E_up): |R(x) - R'(x)| <= E and |L(x) - L'(x)| <= E (L counts < x).
//   * Query. For p the reported value v is the item i with C_(i-1) <= h < C_i, h = p (n - 1): always one
//     of the slice's values (h = 0 and h = n - 1 report the exact min and max instead). Then
//     L'(v) <= C_(i-1) <= h and R'(v) >= C_i > h, so the sorted positions [L(v), R(v) - 1] that v
//     occupies reach to within E + 1 of h: v = x_(j) for an integer j with |j - p (n - 1)| <= E + 1.
//     quantile_rank_error reports max over slices of (E + 1) / n — a proven bound computed from the
//     compactions that actually happened.
//   * A priori: the nodes of one tree level hold disjoint members, so the G of one level sum to less
//     than n / k; the tree has ceil(log2 B) + 1 levels including the leaves, so
//     (E + 1) / n < (ceil(log2 B) + 1) / k + 1 / n (sketch_rank_error_bound()). The default k = 2048
//     gives < 9 / 2048 + 1e-6 = 0.44% for 10^6 members (B = 245) and < 0.30% for 10^5 (B = 25).
//   ensemble_statistics::finish() (study/statistics.hpp) answers the query.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <utility>
#include <vector>

namespace lockstep::study::statistics_detail {

struct weighted_value {
  double value;
  std::int64_t weight;
};

// One slice's quantile summary: items sorted by value, total weight = values summarized.
struct quantile_sketch {
  std::vector<weighted_value> items;
  std::int64_t total = 0;
  std::int64_t error_down = 0;  // true rank - summary rank <= error_down (down compactions)
  std::int64_t error_up = 0;    // summary rank - true rank <= error_up (up compactions)
};

// Keeps, of the sorted items [first, last) of total weight n, the first item at or past each multiple
// of n / k of the cumulative weight (at most k items, the last item always); each kept item takes the
// weight of the dropped items before it. Returns the largest weight dropped in front of a kept item,
// the G of the banner. Called with reverse iterators it is the mirrored ("up") compaction.
template <class Iterator>
std::int64_t compact_into(Iterator first, Iterator last, std::int64_t n, std::int64_t k,
                          std::vector<weighted_value>& out) {
  std::int64_t cumulative = 0, kept_through = 0, next_target = 1, largest_dropped = 0;
  for (; first != last; ++first) {
    cumulative += first->weight;
    if (cumulative * k >= next_target * n) {
      largest_dropped = std::max(largest_dropped, cumulative - first->weight - kept_through);
      out.push_back({first->value, cumulative - kept_through});
      kept_through = cumulative;
      next_target = cumulative * k / n + 1;
    }
  }
  return largest_dropped;
}

// Compacts `s` to at most k items when it holds more; `down` chooses the direction (see the banner).
inline void compact(quantile_sketch& s, std::int64_t k, bool down) {
  if (s.items.size() <= static_cast<std::size_t>(k)) return;
  std::vector<weighted_value> kept;
  kept.reserve(static_cast<std::size_t>(k));
  if (down) {
    s.error_down += compact_into(s.items.begin(), s.items.end(), s.total, k, kept);
  } else {
    s.error_up += compact_into(s.items.rbegin(), s.items.rend(), s.total, k, kept);
    std::reverse(kept.begin(), kept.end());
  }
  s.items = std::move(kept);
}

inline quantile_sketch merge(const quantile_sketch& a, const quantile_sketch& b, std::int64_t k, bool down) {
  quantile_sketch r;
  r.items.reserve(a.items.size() + b.items.size());
  std::merge(a.items.begin(), a.items.end(), b.items.begin(), b.items.end(), std::back_inserter(r.items),
             [](const weighted_value& x, const weighted_value& y) { return x.value < y.value; });
  r.total = a.total + b.total;
  r.error_down = a.error_down + b.error_down;
  r.error_up = a.error_up + b.error_up;
  compact(r, k, down);
  return r;
}

}  // namespace lockstep::study::statistics_detail
