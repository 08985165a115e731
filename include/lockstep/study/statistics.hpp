// lockstep/study/statistics.hpp — deterministic statistics across the members of a study: for every
// slice (save time s, output component c), flattened by the caller to W = save_count x components
// values per member, the count of values that entered, mean, sample standard deviation, min, max,
// quantiles and the Monte Carlo standard error of the mean.
//
// Determinism (DESIGN.md section 3). Members are grouped into fixed blocks of `statistics_block`
// consecutive member indices (block b = members [4096 b, 4096 b + 4096) clipped to the ensemble). Inside a
// block, values are accumulated in member order; blocks are combined in a fixed binary tree over the
// block indices (a perfect binary tree over 0..2^L-1, L = ceil(log2 B), whose empty right subtrees are
// skipped). Every node of the tree is a fixed function of its two children, so the result is bitwise
// the same for any chunking of the members, any order in which blocks complete, any number of threads
// and — once ranks own whole blocks — any number of MPI ranks.
//
// Moments. Per block, (n, mean, M2) by Welford's update (Welford 1962, Technometrics 4); blocks merged
// by the pairwise update of Chan, Golub & LeVeque (1979, Stanford STAN-CS-79-773; 1983, Am. Stat. 37,
// section 2, there in sums rather than means): delta = mean_b - mean_a, mean = mean_a + delta n_b / n,
// M2 = M2_a + M2_b + delta^2 n_a n_b / n.
// std is the sample standard deviation sqrt(M2 / (n - 1)).
//
// NaN. A member that failed has NaN outputs for save times it never reached. NaN values are skipped and
// `count` says per slice how many values entered. A statistic that is not defined for a slice is NaN,
// never a number: mean, min, max and quantiles need count >= 1; std and mean_stderr need count >= 2 (or
// 2 replicates with values). Infinities are values: they enter and propagate.
//
// Standard error of the mean. Random sampling (members_per_replicate == 0): std / sqrt(count).
// Randomized QMC (members_per_replicate == M > 0): the members form R = members_total / M contiguous
// replicates (sampling_plan.hpp numbers members replicate-major). Each replicate's mean is accumulated
// like the global moments but on its own: a replicate boundary may fall inside a block, so a block is
// cut into cells (block ∩ replicate), each cell accumulated in member order, and a replicate's cells
// merged in a fixed binary tree over the replicate's block indices. Then mean_stderr = s_R / sqrt(R'),
// s_R the sample standard deviation (two-pass, replicate order) of the R' replicate means that have at
// least one value (replicates whose slice is all NaN are left out; R' < 2 gives NaN).
//
// Quantiles (Hyndman & Fan 1996, Am. Stat. 50, type 7 — the default of R and numpy). Exact when the
// stored values fit the budget: members_total x W x 8 bytes <= quantile_memory_budget_bytes. Values are
// stored by member index and at finish() each slice is copied (NaN left out, one slice at a time), and
// order statistics are selected with std::nth_element. With h = (n - 1) p, j = floor(h), t = h - j,
// Q(p) = x_(j) + t (x_(j+1) - x_(j)) evaluated exactly as numpy's `_lerp` does (b - (b - a)(1 - t) when
// t >= 0.5), so the numbers equal numpy.quantile(..., method="linear") bit for bit.
//
// Otherwise a deterministic mergeable quantile sketch: a weighted sample of the slice's values in the
// spirit of Manku, Rajagopalan & Lindsay (1998, SIGMOD, "collapse" of weighted buffers) and Agarwal et
// al. (2012, PODS, "Mergeable summaries"), merged in the same fixed tree as the moments.
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
//
// Memory (W = width, B = number of blocks, k = sketch items, R = replicates):
//   * moments: 40 W bytes per block in progress and per pending tree node. When blocks complete in
//     increasing order (one process, scheduler chunks in member order) the tree behaves like a binary
//     counter and at most ceil(log2 B) + 1 nodes are pending: O(W log B). An adversarial completion
//     order can leave O(B) nodes pending: O(W B) at worst.
//   * replicates (QMC): 16 W bytes per replicate for its final mean, plus pending cells as above.
//   * exact quantiles: 8 members_total W bytes, plus 8 members_total bytes of scratch in finish().
//   * sketch: up to 8 x 4096 W bytes per block in progress and 16 k W bytes per pending node.
// None of this depends on keeping trajectories: a study of 10^6 members with statistics only runs with
// the scheduler's keep_outputs = false and feeds each chunk to add_range() from on_chunk.
// An ensemble_statistics is not thread-safe: one thread adds (the scheduler calls on_chunk from one).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lockstep::study {

// Members per block: the unit of in-order accumulation, and the leaf of the fixed combination tree.
inline constexpr long statistics_block = 4096;

// Items a quantile sketch keeps per slice and node: < 0.5% rank error for 10^6 members (see above).
inline constexpr std::size_t default_sketch_items = 2048;

// What finish() returns. Every vector indexed by slice has W entries, slice = s * components + c as
// the caller flattened it.
struct ensemble_summary {
  std::vector<double> quantile_probabilities;  // as given to the constructor
  std::vector<std::int64_t> count;             // values (non-NaN) that entered each slice
  std::vector<double> mean;
  std::vector<double> std;                     // sample standard deviation, n - 1 in the denominator
  std::vector<double> min;
  std::vector<double> max;
  std::vector<double> mean_stderr;             // std / sqrt(n), or the replicate-based error for QMC
  std::vector<std::vector<double>> quantiles;  // [p][W]
  bool quantiles_exact = true;                 // type 7 exactly; false: from the sketch
  double quantile_rank_error = 0.0;            // 0 when exact; else a proven bound on |rank error| / n
};

namespace statistics_detail {

// Running moments of one slice (Welford 1962; Chan, Golub & LeVeque 1979).
struct moments {
  std::int64_t n = 0;
  double mean = 0.0;
  double m2 = 0.0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void add(double x) {
    ++n;
    const double delta = x - mean;
    mean += delta / static_cast<double>(n);
    m2 += delta * (x - mean);
    min = std::min(min, x);
    max = std::max(max, x);
  }
};

inline moments merge(const moments& a, const moments& b) {
  // An empty side returns the other unchanged, so empty blocks or slices cannot perturb the result.
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  moments r;
  r.n = a.n + b.n;
  const double na = static_cast<double>(a.n), nb = static_cast<double>(b.n), n = static_cast<double>(r.n);
  const double delta = b.mean - a.mean;
  r.mean = a.mean + delta * (nb / n);
  r.m2 = a.m2 + b.m2 + delta * delta * (na * nb / n);
  r.min = std::min(a.min, b.min);
  r.max = std::max(a.max, b.max);
  return r;
}

// Running mean only: one replicate's cell.
struct mean_accumulator {
  std::int64_t n = 0;
  double mean = 0.0;

  void add(double x) {
    ++n;
    mean += (x - mean) / static_cast<double>(n);
  }
};

inline mean_accumulator merge(const mean_accumulator& a, const mean_accumulator& b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  mean_accumulator r;
  r.n = a.n + b.n;
  r.mean = a.mean + (b.mean - a.mean) * (static_cast<double>(b.n) / static_cast<double>(r.n));
  return r;
}

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

// A perfect binary tree over leaves 0..2^L-1 (L = ceil(log2 leaves)); node (level, index) covers leaves
// [index 2^level, (index + 1) 2^level). A node is formed as soon as both children exist; a child whose
// leaf range is empty (right of the last leaf) is skipped, its sibling moving up unchanged. The shape
// depends on the number of leaves only, so the root is the same whatever order leaves arrive in.
template <class Node>
class fixed_pairwise_tree {
 public:
  explicit fixed_pairwise_tree(long leaves) : leaves_(leaves) {
    while ((long{1} << top_level_) < leaves_) ++top_level_;
  }

  // combine(left, right, level, index) forms node (level, index) from its children.
  template <class Combine>
  void insert_leaf(long leaf, Node node, Combine&& combine) {
    int level = 0;
    long index = leaf;
    while (level < top_level_) {
      const long sibling = index ^ 1;
      if ((sibling << level) < leaves_) {
        const auto it = pending_.find({level, sibling});
        if (it == pending_.end()) break;
        Node other = std::move(it->second);
        pending_.erase(it);
        const bool node_is_left = (index & 1) == 0;
        ++level;
        index >>= 1;
        node = node_is_left ? combine(std::move(node), std::move(other), level, index)
                            : combine(std::move(other), std::move(node), level, index);
      } else {
        ++level;
        index >>= 1;
      }
    }
    pending_.emplace(std::pair{level, index}, std::move(node));
  }

  bool complete() const { return pending_.size() == 1 && pending_.begin()->first == std::pair{top_level_, 0L}; }
  const Node& root() const { return pending_.begin()->second; }
  std::size_t pending_nodes() const { return pending_.size(); }

 private:
  long leaves_;
  int top_level_ = 0;
  std::map<std::pair<int, long>, Node> pending_;
};

}  // namespace statistics_detail

class ensemble_statistics {
 public:
  // members_per_replicate: 0 for random sampling (mean_stderr = std / sqrt(n)); M > 0 for randomized QMC
  // with members_total / M replicates of M consecutive members (M must divide members_total).
  // quantile_memory_budget_bytes: exact quantiles when members_total x width x 8 bytes fit, else the
  // sketch with sketch_items items per slice and node.
  ensemble_statistics(long members_total, std::size_t width, std::vector<double> quantile_probabilities,
                      long members_per_replicate, std::size_t quantile_memory_budget_bytes,
                      std::size_t sketch_items = default_sketch_items)
      : members_total_(members_total),
        width_(width),
        probabilities_(std::move(quantile_probabilities)),
        members_per_replicate_(members_per_replicate),
        sketch_items_(static_cast<std::int64_t>(sketch_items)),
        blocks_((members_total + statistics_block - 1) / statistics_block),
        block_done_(static_cast<std::size_t>(std::max(blocks_, 0L)), 0),
        tree_(blocks_) {
    if (members_total < 1) throw std::invalid_argument("ensemble_statistics: members_total must be >= 1");
    if (width < 1) throw std::invalid_argument("ensemble_statistics: width must be >= 1");
    for (const double p : probabilities_)
      if (!(p >= 0.0 && p <= 1.0))
        throw std::invalid_argument("ensemble_statistics: quantile probabilities must lie in [0, 1]");
    if (members_per_replicate < 0 || (members_per_replicate > 0 && members_total % members_per_replicate != 0))
      throw std::invalid_argument("ensemble_statistics: members_per_replicate must be 0 or divide members_total");
    if (members_per_replicate > 0) {
      replicates_ = members_total / members_per_replicate;
      replicate_means_.resize(static_cast<std::size_t>(replicates_) * width_);
    }
    if (!probabilities_.empty()) {
      const std::size_t members = static_cast<std::size_t>(members_total);
      exact_ = width_ <= quantile_memory_budget_bytes / sizeof(double) / members;
      if (exact_) {
        exact_values_.assign(members * width_, std::numeric_limits<double>::quiet_NaN());
      } else {
        if (sketch_items_ < 1) throw std::invalid_argument("ensemble_statistics: sketch_items must be >= 1");
        // compact_into forms cumulative x k in 64 bits.
        if (members_total > std::numeric_limits<std::int64_t>::max() / (2 * sketch_items_))
          throw std::invalid_argument("ensemble_statistics: members_total x sketch_items too large");
      }
    }
  }

  bool quantiles_exact() const { return exact_; }
  long blocks() const { return blocks_; }

  // A priori bound on quantile_rank_error in sketch mode (banner): (ceil(log2 B) + 1) / k + 1 / n,
  // here with n = members_total (a slice with fewer values has a larger 1 / n term only).
  static double sketch_rank_error_bound(long members_total, std::size_t sketch_items) {
    const long blocks = (members_total + statistics_block - 1) / statistics_block;
    int levels = 1;
    while ((long{1} << (levels - 1)) < blocks) ++levels;
    return static_cast<double>(levels) / static_cast<double>(sketch_items) + 1.0 / static_cast<double>(members_total);
  }

  // The W values of one member. Within a block members must arrive in increasing order, each exactly
  // once and without gaps (a skipped member could never be added later); blocks in any order.
  void add(long member, const double* values) {
    if (member < 0 || member >= members_total_)
      throw std::out_of_range("ensemble_statistics::add: member " + std::to_string(member) + " outside the ensemble");
    const long b = member / statistics_block;
    if (block_done_[static_cast<std::size_t>(b)])
      throw std::logic_error("ensemble_statistics::add: member " + std::to_string(member) + " added twice");
    auto it = in_progress_.find(b);
    if (it == in_progress_.end()) it = in_progress_.emplace(b, new_block(b)).first;
    block_state& block = it->second;
    if (member != block.next_member)
      throw std::logic_error("ensemble_statistics::add: member " + std::to_string(member) + " out of order; block " +
                             std::to_string(b) + " expects member " + std::to_string(block.next_member));

    statistics_detail::mean_accumulator* cell = nullptr;
    if (replicates_ > 0) {
      const long r = member / members_per_replicate_;
      if (block.cells.empty() || block.cells.back().replicate != r)
        block.cells.push_back({r, std::vector<statistics_detail::mean_accumulator>(width_)});
      cell = block.cells.back().means.data();
    }
    for (std::size_t c = 0; c < width_; ++c) {
      const double x = values[c];
      if (std::isnan(x)) continue;
      block.moments[c].add(x);
      if (cell) cell[c].add(x);
      if (!exact_ && !probabilities_.empty()) block.sketch_values[c].push_back(x);
    }
    if (exact_)
      std::copy(values, values + width_, exact_values_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(member) * width_));

    if (++block.next_member == block.end_member) {
      complete_block(b, std::move(block));
      in_progress_.erase(it);
    }
  }

  // count members first_member, first_member + 1, ... stored member-major (W values each), as the
  // scheduler's chunk_results::outputs holds them.
  void add_range(long first_member, long count, const double* values) {
    for (long i = 0; i < count; ++i) add(first_member + i, values + static_cast<std::size_t>(i) * width_);
  }

  // The statistics; every member must have been added. Does not change the accumulated state.
  ensemble_summary finish() const {
    if (!tree_.complete() || !in_progress_.empty())
      throw std::logic_error("ensemble_statistics::finish: not every member has been added");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const node& root = tree_.root();
    ensemble_summary r;
    r.quantile_probabilities = probabilities_;
    r.count.resize(width_);
    r.mean.assign(width_, nan);
    r.std.assign(width_, nan);
    r.min.assign(width_, nan);
    r.max.assign(width_, nan);
    r.mean_stderr.assign(width_, nan);
    for (std::size_t c = 0; c < width_; ++c) {
      const statistics_detail::moments& m = root.moments[c];
      r.count[c] = m.n;
      if (m.n >= 1) {
        r.mean[c] = m.mean;
        r.min[c] = m.min;
        r.max[c] = m.max;
      }
      if (m.n >= 2) r.std[c] = std::sqrt(m.m2 / static_cast<double>(m.n - 1));
      r.mean_stderr[c] = replicates_ > 0 ? replicate_stderr(c) : r.std[c] / std::sqrt(static_cast<double>(m.n));
    }
    r.quantiles.assign(probabilities_.size(), std::vector<double>(width_, nan));
    r.quantiles_exact = exact_;
    r.quantile_rank_error = 0.0;
    if (!probabilities_.empty()) {
      if (exact_)
        exact_quantiles(r);
      else
        sketch_quantiles(root, r);
    }
    return r;
  }

 private:
  struct replicate_cell {
    long replicate;
    std::vector<statistics_detail::mean_accumulator> means;  // W
  };
  struct block_state {
    long next_member;
    long end_member;
    std::vector<statistics_detail::moments> moments;    // W
    std::vector<std::vector<double>> sketch_values;     // W, sketch mode only
    std::vector<replicate_cell> cells;                  // QMC only, in replicate order
  };
  struct node {
    std::vector<statistics_detail::moments> moments;            // W
    std::vector<statistics_detail::quantile_sketch> sketches;   // W, sketch mode only
  };
  using replicate_node = std::vector<statistics_detail::mean_accumulator>;

  bool sketch_mode() const { return !exact_ && !probabilities_.empty(); }

  block_state new_block(long b) const {
    block_state s;
    s.next_member = b * statistics_block;
    s.end_member = std::min(members_total_, s.next_member + statistics_block);
    s.moments.resize(width_);
    if (sketch_mode()) s.sketch_values.resize(width_);
    return s;
  }

  // Down compactions at even indices, up at odd (banner): errors of both signs in equal measure.
  static bool compacts_down(long index) { return (index & 1) == 0; }

  void complete_block(long b, block_state&& block) {
    node leaf;
    leaf.moments = std::move(block.moments);
    if (sketch_mode()) {
      leaf.sketches.resize(width_);
      for (std::size_t c = 0; c < width_; ++c) {
        std::vector<double>& v = block.sketch_values[c];
        std::sort(v.begin(), v.end());
        statistics_detail::quantile_sketch& s = leaf.sketches[c];
        s.items.reserve(v.size());
        for (const double x : v) s.items.push_back({x, 1});
        s.total = static_cast<std::int64_t>(v.size());
        std::vector<double>().swap(v);
        statistics_detail::compact(s, sketch_items_, compacts_down(b));
      }
    }
    tree_.insert_leaf(b, std::move(leaf), [this](node&& left, node&& right, int, long index) {
      node parent;
      parent.moments.resize(width_);
      for (std::size_t c = 0; c < width_; ++c) parent.moments[c] = statistics_detail::merge(left.moments[c], right.moments[c]);
      if (!left.sketches.empty()) {
        parent.sketches.resize(width_);
        for (std::size_t c = 0; c < width_; ++c)
          parent.sketches[c] = statistics_detail::merge(left.sketches[c], right.sketches[c], sketch_items_, compacts_down(index));
      }
      return parent;
    });
    block_done_[static_cast<std::size_t>(b)] = 1;

    for (replicate_cell& cell : block.cells) {
      const long r = cell.replicate;
      const long first_block = r * members_per_replicate_ / statistics_block;
      const long last_block = ((r + 1) * members_per_replicate_ - 1) / statistics_block;
      auto it = replicate_trees_.find(r);
      if (it == replicate_trees_.end())
        it = replicate_trees_.emplace(r, statistics_detail::fixed_pairwise_tree<replicate_node>(last_block - first_block + 1)).first;
      it->second.insert_leaf(b - first_block, std::move(cell.means), [this](replicate_node&& left, replicate_node&& right, int, long) {
        replicate_node parent(width_);
        for (std::size_t c = 0; c < width_; ++c) parent[c] = statistics_detail::merge(left[c], right[c]);
        return parent;
      });
      if (it->second.complete()) {
        std::copy(it->second.root().begin(), it->second.root().end(),
                  replicate_means_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * width_));
        replicate_trees_.erase(it);
      }
    }
  }

  // s_R / sqrt(R') over the replicate means that exist, two-pass in replicate order.
  double replicate_stderr(std::size_t c) const {
    long present = 0;
    double sum = 0.0;
    for (long r = 0; r < replicates_; ++r) {
      const statistics_detail::mean_accumulator& m = replicate_means_[static_cast<std::size_t>(r) * width_ + c];
      if (m.n == 0) continue;
      ++present;
      sum += m.mean;
    }
    if (present < 2) return std::numeric_limits<double>::quiet_NaN();
    const double mean_of_means = sum / static_cast<double>(present);
    double squares = 0.0;
    for (long r = 0; r < replicates_; ++r) {
      const statistics_detail::mean_accumulator& m = replicate_means_[static_cast<std::size_t>(r) * width_ + c];
      if (m.n == 0) continue;
      squares += (m.mean - mean_of_means) * (m.mean - mean_of_means);
    }
    return std::sqrt(squares / static_cast<double>(present - 1)) / std::sqrt(static_cast<double>(present));
  }

  // Hyndman & Fan type 7 by selection, one slice at a time; probabilities visited in increasing order so
  // that each std::nth_element works on the part right of the previous one.
  void exact_quantiles(ensemble_summary& r) const {
    std::vector<std::size_t> order(probabilities_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return probabilities_[a] < probabilities_[b]; });
    std::vector<double> slice;
    slice.reserve(static_cast<std::size_t>(members_total_));
    for (std::size_t c = 0; c < width_; ++c) {
      slice.clear();
      for (long i = 0; i < members_total_; ++i) {
        const double x = exact_values_[static_cast<std::size_t>(i) * width_ + c];
        if (!std::isnan(x)) slice.push_back(x);
      }
      if (slice.empty()) continue;
      const std::size_t n = slice.size();
      std::size_t sorted_from = 0;  // slice[sorted_from..] holds the values >= every order statistic selected so far
      for (const std::size_t q : order) {
        const double h = static_cast<double>(n - 1) * probabilities_[q];
        const std::size_t j = static_cast<std::size_t>(std::floor(h));
        const double t = h - static_cast<double>(j);
        const auto at = slice.begin() + static_cast<std::ptrdiff_t>(j);
        std::nth_element(slice.begin() + static_cast<std::ptrdiff_t>(sorted_from), at, slice.end());
        sorted_from = j;
        const double a = *at;
        if (t == 0.0 || j + 1 >= n) {
          r.quantiles[q][c] = a;
          continue;
        }
        const double b = *std::min_element(at + 1, slice.end());
        // numpy's _lerp, so that results equal numpy.quantile(method="linear") bit for bit.
        const double diff = b - a;
        r.quantiles[q][c] = t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
      }
    }
  }

  void sketch_quantiles(const node& root, ensemble_summary& r) const {
    std::vector<std::int64_t> cumulative;
    for (std::size_t c = 0; c < width_; ++c) {
      const statistics_detail::quantile_sketch& s = root.sketches[c];
      if (s.total == 0) continue;
      cumulative.resize(s.items.size());
      std::transform_inclusive_scan(s.items.begin(), s.items.end(), cumulative.begin(), std::plus<>{},
                                    [](const statistics_detail::weighted_value& w) { return w.weight; });
      for (std::size_t q = 0; q < probabilities_.size(); ++q) {
        const double h = static_cast<double>(s.total - 1) * probabilities_[q];
        // The ends are known exactly from the moments (a compaction may drop the smallest or largest item).
        if (h == 0.0 || h == static_cast<double>(s.total - 1)) {
          r.quantiles[q][c] = h == 0.0 ? root.moments[c].min : root.moments[c].max;
          continue;
        }
        // The first item whose cumulative weight exceeds h: C_(i-1) <= h < C_i.
        const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), h,
                                         [](double target, std::int64_t cw) { return target < static_cast<double>(cw); });
        r.quantiles[q][c] = s.items[static_cast<std::size_t>(it - cumulative.begin())].value;
      }
      const double e = static_cast<double>(std::max(s.error_down, s.error_up) + 1) / static_cast<double>(s.total);
      r.quantile_rank_error = std::max(r.quantile_rank_error, e);
    }
  }

  long members_total_;
  std::size_t width_;
  std::vector<double> probabilities_;
  long members_per_replicate_;
  std::int64_t sketch_items_;
  long blocks_;
  long replicates_ = 0;
  bool exact_ = false;
  std::vector<char> block_done_;
  std::map<long, block_state> in_progress_;
  statistics_detail::fixed_pairwise_tree<node> tree_;
  std::map<long, statistics_detail::fixed_pairwise_tree<replicate_node>> replicate_trees_;
  std::vector<statistics_detail::mean_accumulator> replicate_means_;  // [replicate][W]
  std::vector<double> exact_values_;                                  // [member][W], exact mode only
};

}  // namespace lockstep::study
