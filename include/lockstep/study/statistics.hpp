// lockstep/study/statistics.hpp — deterministic statistics across the members of a study: for every
// slice (save time s, output component c), flattened by the caller to W = save_count x components
// values per member, the count of values that entered, mean, sample standard deviation, min, max,
// quantiles and the Monte Carlo standard error of the mean.
//
// Determinism (docs/DESIGN-NOTES.md, "Conventions"). Members are grouped into fixed blocks of `statistics_block`
// consecutive member indices (block b = members [4096 b, 4096 b + 4096) clipped to the ensemble). Inside a
// block, values are accumulated in member order; blocks are combined in a fixed binary tree over the
// block indices (a perfect binary tree over 0..2^L-1, L = ceil(log2 B), whose empty right subtrees are
// skipped). Every node of the tree is a fixed function of its two children, so the result is bitwise
// the same for any chunking of the members, any order in which blocks complete, any number of threads
// and — once ranks own whole blocks — any number of MPI ranks.
//
// Moments. Per block, (n, mean, M2) by Welford's update, blocks merged by the pairwise update of Chan,
// Golub & LeVeque (study/moments.hpp). std is the sample standard deviation sqrt(M2 / (n - 1)).
//
// Exceedance. Where the caller gives a slice a threshold, the values above it are counted with the
// moments, and the counts add up in the same tree (integers: any order gives the same counts). With
// replicates (below) each replicate counts its own too, and above_stderr is the standard error of the
// fraction above from their spread, as mean_stderr is the mean's: the fraction is the mean of the
// indicator of x > threshold.
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
// Otherwise a deterministic mergeable quantile sketch per slice (study/quantile_sketch.hpp: the
// compaction, its proven rank-error bound and the query), merged in the same fixed tree as the moments
// (study/fixed_pairwise_tree.hpp).
//
// Memory (W = width, B = number of blocks, k = sketch items, R = replicates):
//   * moments: 40 W bytes per block in progress and per pending tree node. When blocks complete in
//     increasing order (one process, scheduler chunks in member order) the tree behaves like a binary
//     counter and at most ceil(log2 B) + 1 nodes are pending: O(W log B). An adversarial completion
//     order can leave O(B) nodes pending: O(W B) at worst.
//   * replicates (QMC): 16 W bytes per replicate for its final mean, plus pending cells as above.
//   * exact quantiles: 8 members_total W bytes, plus 8 members_total bytes of scratch in finish().
//   * sketch: up to 8 x 4096 W bytes per block in progress and 16 k W bytes per pending node.
// Across processes and restarts. serialize() saves the accumulated state (pending tree nodes, blocks in
// progress, replicate trees, stored exact values) and merge_serialized() puts each saved node back at its
// own (level, index). A checkpoint restores a state into a fresh object and goes on adding; MPI ranks
// that each add whole blocks merge their states into one object. Both give the single-process result
// bit for bit, because the tree is the same and every node is formed from the same children.
// None of this depends on keeping trajectories: a study of 10^6 members with statistics only runs with
// the scheduler's keep_outputs = false and feeds each chunk to add_range() from on_chunk.
// An ensemble_statistics is not thread-safe: one thread adds (the scheduler calls on_chunk from one).
#pragma once

#include <algorithm>
#include <bit>
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
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/study/byte_codec.hpp"
#include "lockstep/study/fixed_pairwise_tree.hpp"
#include "lockstep/study/moments.hpp"
#include "lockstep/study/quantile_sketch.hpp"

namespace lockstep::study {

// Members per block: the unit of in-order accumulation, and the leaf of the fixed combination tree.
inline constexpr long statistics_block = 4096;

// Items a quantile sketch keeps per slice and node: < 0.5% rank error for 10^6 members
// (study/quantile_sketch.hpp).
inline constexpr std::size_t default_sketch_items = 2048;

// What finish() returns. Every vector indexed by slice has W entries, slice = s * components + c as
// the caller flattened it.
struct ensemble_summary {
  std::vector<double> quantile_probabilities;  // as given to the constructor
  std::vector<std::int64_t> count;             // values (non-NaN) that entered each slice
  std::vector<std::int64_t> above;             // of those, the values above the slice's exceedance threshold
  std::vector<double> mean;
  std::vector<double> std;                     // sample standard deviation, n - 1 in the denominator
  std::vector<double> min;
  std::vector<double> max;
  std::vector<double> mean_stderr;             // std / sqrt(n), or the replicate-based error for QMC
  // With exceedance thresholds and replicates (QMC): the standard error of above / count from the spread
  // of the replicates' own fractions, s_R / sqrt(R'), and R', the replicates with values in the slice;
  // NaN and 0 without replicates, for a slice without a threshold, or with R' < 2.
  std::vector<double> above_stderr;
  std::vector<std::int64_t> above_replicates;
  std::vector<std::vector<double>> quantiles;  // [p][W]
  bool quantiles_exact = true;                 // type 7 exactly; false: from the sketch
  double quantile_rank_error = 0.0;            // 0 when exact; else a proven bound on |rank error| / n
};

class ensemble_statistics {
 public:
  // members_per_replicate: 0 for random sampling (mean_stderr = std / sqrt(n)); M > 0 for randomized QMC
  // with members_total / M replicates of M consecutive members (M must divide members_total).
  // quantile_memory_budget_bytes: exact quantiles when members_total x width x 8 bytes fit, else the
  // sketch with sketch_items items per slice and node.
  // keep_member_values: store every member's values (as exact quantiles do) even without quantiles,
  // for an analysis of them at the end (member_values(): the sensitivity indices of a study); the
  // caller checks that they fit its memory. exceedance_thresholds: empty, or W thresholds (NaN: none)
  // above which each slice's values are counted (ensemble_summary::above).
  ensemble_statistics(long members_total, std::size_t width, std::vector<double> quantile_probabilities,
                      long members_per_replicate, std::size_t quantile_memory_budget_bytes,
                      std::size_t sketch_items = default_sketch_items, bool keep_member_values = false,
                      std::vector<double> exceedance_thresholds = {})
      : members_total_(members_total),
        width_(width),
        probabilities_(std::move(quantile_probabilities)),
        thresholds_(std::move(exceedance_thresholds)),
        members_per_replicate_(members_per_replicate),
        sketch_items_(static_cast<std::int64_t>(sketch_items)),
        blocks_((members_total + statistics_block - 1) / statistics_block),
        block_done_(static_cast<std::size_t>(std::max(blocks_, 0L)), 0),
        tree_(blocks_) {
    if (members_total < 1) throw std::invalid_argument("ensemble_statistics: members_total must be >= 1");
    if (width < 1) throw std::invalid_argument("ensemble_statistics: width must be >= 1");
    if (!thresholds_.empty() && thresholds_.size() != width)
      throw std::invalid_argument("ensemble_statistics: exceedance_thresholds must be empty or hold width entries");
    for (const double p : probabilities_)
      if (!(p >= 0.0 && p <= 1.0))
        throw std::invalid_argument("ensemble_statistics: quantile probabilities must lie in [0, 1]");
    if (members_per_replicate < 0 || (members_per_replicate > 0 && members_total % members_per_replicate != 0))
      throw std::invalid_argument("ensemble_statistics: members_per_replicate must be 0 or divide members_total");
    if (members_per_replicate > 0) {
      replicates_ = members_total / members_per_replicate;
      replicate_means_.resize(static_cast<std::size_t>(replicates_) * width_);
      replicate_done_.assign(static_cast<std::size_t>(replicates_), 0);
    }
    if (!probabilities_.empty() || keep_member_values) {
      const std::size_t members = static_cast<std::size_t>(members_total);
      exact_ = keep_member_values || width_ <= quantile_memory_budget_bytes / sizeof(double) / members;
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

  // Every member's W values, member-major, where the object keeps them (exact quantiles, or
  // keep_member_values); empty otherwise. A member not added yet holds NaN.
  const std::vector<double>& member_values() const { return exact_values_; }
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
      const bool above = !thresholds_.empty() && x > thresholds_[c];  // never for a NaN threshold
      if (above) ++block.moments[c].above;
      if (cell) {
        cell[c].add(x);
        if (above) ++cell[c].above;
      }
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
    r.above.resize(width_);
    r.mean.assign(width_, nan);
    r.std.assign(width_, nan);
    r.min.assign(width_, nan);
    r.max.assign(width_, nan);
    r.mean_stderr.assign(width_, nan);
    for (std::size_t c = 0; c < width_; ++c) {
      const statistics_detail::moments& m = root.moments[c];
      r.count[c] = m.n;
      r.above[c] = m.above;
      if (m.n >= 1) {
        r.mean[c] = m.mean;
        r.min[c] = m.min;
        r.max[c] = m.max;
      }
      if (m.n >= 2) r.std[c] = std::sqrt(m.m2 / static_cast<double>(m.n - 1));
      r.mean_stderr[c] = replicates_ > 0 ? replicate_stderr(c) : r.std[c] / std::sqrt(static_cast<double>(m.n));
    }
    r.above_stderr.assign(width_, nan);
    r.above_replicates.assign(width_, 0);
    if (replicates_ > 0 && !thresholds_.empty())
      for (std::size_t c = 0; c < width_; ++c)
        if (!std::isnan(thresholds_[c]))
          r.above_stderr[c] = replicate_stderr(c, [](const statistics_detail::mean_accumulator& m) {
            return static_cast<double>(m.above) / static_cast<double>(m.n);
          }, &r.above_replicates[c]);
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

  // ---- saving, restoring and merging the accumulated state ----
  //
  // serialize() captures everything added so far: the pending nodes of the fixed tree, the blocks in
  // progress, the replicate trees and finished replicate means, and the stored values of exact
  // quantiles. merge_serialized() adds such a state to this object, which must have been constructed
  // with the same arguments and must not hold any of its members. Every node goes back to its own
  // (level, index) in the tree, so merging gives bit for bit what adding the members here would have
  // given: a state saved at a checkpoint and merged into a fresh object continues exactly where it
  // stopped, and MPI ranks that each add whole blocks and merge their states into one object get the
  // single-process result for any number of ranks. (A block in progress can be merged only into an
  // object that has none of that block's members; two parts of one block cannot be merged, since its
  // members are accumulated in order.) A state that is damaged, inconsistent or made with other
  // arguments throws state_error and leaves this object unchanged.
  // The constructor's arguments a saved state was made with, for restoring it without the study at
  // hand (the checkpoint fuzzer does). The quantile memory budget itself is not saved, only whether
  // the members' values are kept: construct with the largest budget for exact, 0 for the sketch, and
  // keep_member_values where they are kept without quantiles (keeps_member_values_only()).
  struct configuration {
    long members_total = 0;
    std::size_t width = 0;
    std::vector<double> probabilities;
    long members_per_replicate = 0;
    std::size_t sketch_items = 0;
    bool exact = false;  // the members' values are kept
    std::vector<double> thresholds;  // the exceedance thresholds, [W] or empty
    bool keeps_member_values_only() const { return exact && probabilities.empty(); }
  };
  static configuration configuration_of(std::string_view bytes) {
    byte_reader in(bytes, "statistics state");
    check_header(in);
    return read_configuration(in);
  }

  std::string serialize() const {
    byte_writer out;
    out.u32(state_magic);
    out.u32(state_version);
    write_configuration(out);
    out.u64(tree_.pending_nodes());
    tree_.for_each_pending([&](int level, long index, const node& n) {
      out.i32(level);
      out.i64(index);
      write_node(out, n);
    });
    out.u64(in_progress_.size());
    for (const auto& [b, block] : in_progress_) {
      out.i64(b);
      out.i64(block.next_member);
      for (const auto& m : block.moments) write_moments(out, m);
      for (const auto& values : block.sketch_values) {
        out.u64(values.size());
        for (const double x : values) out.f64(x);
      }
      out.u64(block.cells.size());
      for (const replicate_cell& cell : block.cells) {
        out.i64(cell.replicate);
        write_means(out, cell.means.data());
      }
    }
    long done_replicates = 0;
    for (const char d : replicate_done_) done_replicates += d ? 1 : 0;
    out.u64(static_cast<std::uint64_t>(done_replicates));
    for (long r = 0; r < replicates_; ++r)
      if (replicate_done_[static_cast<std::size_t>(r)]) {
        out.i64(r);
        write_means(out, replicate_means_.data() + static_cast<std::size_t>(r) * width_);
      }
    std::size_t replicate_nodes = 0;
    for (const auto& [r, tree] : replicate_trees_) replicate_nodes += tree.pending_nodes();
    out.u64(replicate_nodes);
    for (const auto& entry : replicate_trees_)  // not a structured binding: clang 14 cannot capture one
      entry.second.for_each_pending([&](int level, long index, const replicate_node& cells) {
        out.i64(entry.first);
        out.i32(level);
        out.i64(index);
        write_means(out, cells.data());
      });
    const std::vector<std::pair<long, long>> ranges = exact_ ? added_member_ranges() : std::vector<std::pair<long, long>>{};
    out.u64(ranges.size());
    for (const auto& [first, end] : ranges) {
      out.i64(first);
      out.i64(end - first);
      for (std::size_t i = static_cast<std::size_t>(first) * width_; i < static_cast<std::size_t>(end) * width_; ++i)
        out.f64(exact_values_[i]);
    }
    return out.take();
  }

  void merge_serialized(std::string_view bytes) {
    byte_reader in(bytes, "statistics state");
    check_header(in);
    const configuration theirs = read_configuration(in);
    const configuration mine = own_configuration();
    if (theirs.members_total != mine.members_total || theirs.width != mine.width ||
        theirs.probabilities.size() != mine.probabilities.size() ||
        !std::equal(theirs.probabilities.begin(), theirs.probabilities.end(), mine.probabilities.begin(),
                    [](double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }) ||
        theirs.members_per_replicate != mine.members_per_replicate || theirs.sketch_items != mine.sketch_items ||
        theirs.exact != mine.exact || theirs.thresholds.size() != mine.thresholds.size() ||
        !std::equal(theirs.thresholds.begin(), theirs.thresholds.end(), mine.thresholds.begin(),
                    [](double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }))
      in.fail("made for other statistics (members, width, quantiles, replicates, quantile memory or exceedance "
              "thresholds differ)");

    // Decode and check everything first, apply afterwards: a refused state changes nothing.
    std::vector<char> claimed(block_done_);  // blocks done here or in the state
    std::vector<char> state_done(block_done_.size(), 0);
    auto claim = [&](long first_block, long last_block) {
      for (long b = first_block; b < last_block; ++b) {
        if (claimed[static_cast<std::size_t>(b)] || in_progress_.count(b))
          in.fail("block " + std::to_string(b) + " is already accumulated");
        claimed[static_cast<std::size_t>(b)] = 1;
      }
    };

    struct placed_node {
      int level;
      long index;
      node value;
    };
    std::vector<placed_node> nodes(in.count(12));
    for (placed_node& p : nodes) {
      p.level = in.i32();
      p.index = in.i64();
      if (!tree_.valid_node(p.level, p.index)) in.fail("no tree node (" + std::to_string(p.level) + ", " + std::to_string(p.index) + ")");
      const auto [first_block, last_block] = tree_.leaf_range(p.level, p.index);
      claim(first_block, last_block);
      for (long b = first_block; b < last_block; ++b) state_done[static_cast<std::size_t>(b)] = 1;
      const long members = std::min(members_total_, last_block * statistics_block) - first_block * statistics_block;
      p.value = read_node(in, members);
    }

    std::vector<std::pair<long, block_state>> blocks(in.count(16));
    for (auto& [b, block] : blocks) {
      b = in.i64();
      if (b < 0 || b >= blocks_) in.fail("no block " + std::to_string(b));
      claim(b, b + 1);
      block = new_block(b);
      const long start = block.next_member;
      block.next_member = in.i64();
      if (block.next_member <= start || block.next_member >= block.end_member) in.fail("block " + std::to_string(b) + " in progress at an impossible member");
      for (auto& m : block.moments) m = read_moments(in, block.next_member - start);
      for (std::size_t c = 0; c < block.sketch_values.size(); ++c) {
        std::vector<double>& values = block.sketch_values[c];
        values.resize(in.count(8));
        for (double& x : values) x = in.f64();
        if (static_cast<std::int64_t>(values.size()) != block.moments[c].n) in.fail("sketch values disagree with the moments");
      }
      block.cells.resize(in.count(8));
      long previous = -1;
      for (replicate_cell& cell : block.cells) {
        cell.replicate = in.i64();
        if (replicates_ == 0 || cell.replicate <= previous || cell.replicate >= replicates_ ||
            cell.replicate * members_per_replicate_ >= block.next_member || (cell.replicate + 1) * members_per_replicate_ <= start)
          in.fail("replicate cell " + std::to_string(cell.replicate) + " does not belong to block " + std::to_string(b));
        previous = cell.replicate;
        cell.means = read_means(in);
      }
    }

    // A replicate's mean or tree node stands for blocks the state has finished.
    auto replicate_blocks_done = [&](long r, long first_leaf, long last_leaf) {
      for (long j = first_leaf; j < last_leaf; ++j)
        if (!state_done[static_cast<std::size_t>(replicate_first_block(r) + j)])
          in.fail("replicate " + std::to_string(r) + " has blocks the state has not finished");
    };
    std::vector<char> replicate_claimed(replicate_done_);
    std::vector<std::pair<long, replicate_node>> means(in.count(8));
    for (auto& [r, row] : means) {
      r = in.i64();
      if (r < 0 || r >= replicates_ || replicate_claimed[static_cast<std::size_t>(r)]) in.fail("replicate " + std::to_string(r) + " twice or out of range");
      replicate_claimed[static_cast<std::size_t>(r)] = 1;
      replicate_blocks_done(r, 0, replicate_blocks(r));
      row = read_means(in);
    }
    struct placed_cells {
      long replicate;
      int level;
      long index;
      replicate_node value;
    };
    std::vector<placed_cells> cells(in.count(20));
    for (placed_cells& p : cells) {
      p.replicate = in.i64();
      p.level = in.i32();
      p.index = in.i64();
      if (p.replicate < 0 || p.replicate >= replicates_ || replicate_claimed[static_cast<std::size_t>(p.replicate)])
        in.fail("replicate " + std::to_string(p.replicate) + " is out of range or already finished");
      const statistics_detail::fixed_pairwise_tree<replicate_node> shape(replicate_blocks(p.replicate));
      if (!shape.valid_node(p.level, p.index)) in.fail("no replicate tree node (" + std::to_string(p.level) + ", " + std::to_string(p.index) + ")");
      const auto [first_leaf, last_leaf] = shape.leaf_range(p.level, p.index);
      replicate_blocks_done(p.replicate, first_leaf, last_leaf);
      p.value = read_means(in);
    }

    std::vector<std::pair<long, std::vector<double>>> exact(in.count(16));
    for (auto& [first, values] : exact) {
      first = in.i64();
      const std::int64_t count = in.i64();
      if (!exact_ || first < 0 || count < 1 || count > members_total_ - first) in.fail("exact values for impossible members");
      if (static_cast<std::size_t>(count) > in.remaining() / sizeof(double) / width_) in.fail("truncated exact values");
      for (long i = first; i < first + count; ++i) {
        const long b = i / statistics_block;
        const bool added = state_done[static_cast<std::size_t>(b)] ||
                           std::any_of(blocks.begin(), blocks.end(), [&](const auto& p) { return p.first == b && i < p.second.next_member; });
        if (!added) in.fail("exact values for member " + std::to_string(i) + ", which the state has not added");
      }
      values.resize(static_cast<std::size_t>(count) * width_);
      for (double& x : values) x = in.f64();
    }
    if (!in.at_end()) in.fail(std::to_string(in.remaining()) + " bytes after the end of the state");

    // Apply.
    for (placed_node& p : nodes) {
      const auto [first_block, last_block] = tree_.leaf_range(p.level, p.index);
      for (long b = first_block; b < last_block; ++b) block_done_[static_cast<std::size_t>(b)] = 1;
      insert_tree_node(p.level, p.index, std::move(p.value));
    }
    for (auto& [b, block] : blocks) in_progress_.emplace(b, std::move(block));
    for (auto& [r, row] : means) {
      std::copy(row.begin(), row.end(), replicate_means_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * width_));
      replicate_done_[static_cast<std::size_t>(r)] = 1;
    }
    for (placed_cells& p : cells) insert_replicate_node(p.replicate, p.level, p.index, std::move(p.value));
    for (auto& [first, values] : exact)
      std::copy(values.begin(), values.end(), exact_values_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(first) * width_));
  }

  // Members added so far (in completed blocks or in the blocks in progress).
  long members_added() const {
    long added = 0;
    for (long b = 0; b < blocks_; ++b)
      if (block_done_[static_cast<std::size_t>(b)]) added += std::min(members_total_, (b + 1) * statistics_block) - b * statistics_block;
    for (const auto& [b, block] : in_progress_) added += block.next_member - b * statistics_block;
    return added;
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

  // ---- the encoding of serialize() ----
  static constexpr std::uint32_t state_magic = 0x5453534cu;  // "LSST" little-endian
  // 2: the counts above the exceedance thresholds; 3: the replicates' own counts above them.
  static constexpr std::uint32_t state_version = 3;

  void write_configuration(byte_writer& out) const {
    const configuration c = own_configuration();
    out.i64(c.members_total);
    out.u64(c.width);
    out.u64(c.probabilities.size());
    for (const double p : c.probabilities) out.f64(p);
    out.i64(c.members_per_replicate);
    out.i64(static_cast<std::int64_t>(c.sketch_items));
    out.u8(c.exact ? 1 : 0);
    out.u64(c.thresholds.size());
    for (const double x : c.thresholds) out.f64(x);
  }

  static void check_header(byte_reader& in) {
    if (in.u32() != state_magic) in.fail("not a statistics state");
    if (const std::uint32_t version = in.u32(); version != state_version)
      in.fail("format version " + std::to_string(version) + " (this program reads version " + std::to_string(state_version) + ")");
  }
  static configuration read_configuration(byte_reader& in) {
    configuration c;
    c.members_total = in.i64();
    c.width = static_cast<std::size_t>(in.u64());
    c.probabilities.resize(in.count(8));
    for (double& p : c.probabilities) p = in.f64();
    c.members_per_replicate = in.i64();
    c.sketch_items = static_cast<std::size_t>(in.i64());
    c.exact = in.u8() != 0;
    c.thresholds.resize(in.count(8));
    for (double& x : c.thresholds) x = in.f64();
    return c;
  }
  configuration own_configuration() const {
    return {members_total_, width_, probabilities_, members_per_replicate_, static_cast<std::size_t>(sketch_items_), exact_,
            thresholds_};
  }

  static void write_moments(byte_writer& out, const statistics_detail::moments& m) {
    out.i64(m.n);
    out.i64(m.above);
    out.f64(m.mean);
    out.f64(m.m2);
    out.f64(m.min);
    out.f64(m.max);
  }
  static statistics_detail::moments read_moments(byte_reader& in, long members) {
    statistics_detail::moments m;
    m.n = in.i64();
    if (m.n < 0 || m.n > members) in.fail("a count of " + std::to_string(m.n) + " values from " + std::to_string(members) + " members");
    m.above = in.i64();
    if (m.above < 0 || m.above > m.n) in.fail("a count of " + std::to_string(m.above) + " values above a threshold of " + std::to_string(m.n));
    m.mean = in.f64();
    m.m2 = in.f64();
    m.min = in.f64();
    m.max = in.f64();
    return m;
  }

  // A replicate's cells: each slice's count and mean, and its count above the threshold where the
  // statistics have thresholds.
  void write_means(byte_writer& out, const statistics_detail::mean_accumulator* means) const {
    for (std::size_t c = 0; c < width_; ++c) {
      out.i64(means[c].n);
      out.f64(means[c].mean);
      if (!thresholds_.empty()) out.i64(means[c].above);
    }
  }
  replicate_node read_means(byte_reader& in) const {
    replicate_node means(width_);
    for (auto& m : means) {
      m.n = in.i64();
      if (m.n < 0 || m.n > members_total_) in.fail("a replicate count of " + std::to_string(m.n));
      m.mean = in.f64();
      if (!thresholds_.empty()) {
        m.above = in.i64();
        if (m.above < 0 || m.above > m.n) in.fail("a replicate's count above of " + std::to_string(m.above));
      }
    }
    return means;
  }

  void write_node(byte_writer& out, const node& n) const {
    for (const auto& m : n.moments) write_moments(out, m);
    for (const auto& sketch : n.sketches) {
      out.i64(sketch.total);
      out.i64(sketch.error_down);
      out.i64(sketch.error_up);
      out.u64(sketch.items.size());
      for (const auto& item : sketch.items) {
        out.f64(item.value);
        out.i64(item.weight);
      }
    }
  }
  // A node over `members` members. A sketch must be what compaction can produce: sorted values
  // without NaN, positive weights summing to its total (= the slice's count), non-negative errors;
  // queries and merges rely on all of it.
  node read_node(byte_reader& in, long members) const {
    node n;
    n.moments.resize(width_);
    for (auto& m : n.moments) m = read_moments(in, members);
    if (!sketch_mode()) return n;
    n.sketches.resize(width_);
    for (std::size_t c = 0; c < width_; ++c) {
      statistics_detail::quantile_sketch& sketch = n.sketches[c];
      sketch.total = in.i64();
      sketch.error_down = in.i64();
      sketch.error_up = in.i64();
      constexpr std::int64_t error_limit = std::int64_t{1} << 62;  // far above any real error; keeps E + 1 exact
      if (sketch.total != n.moments[c].n || sketch.error_down < 0 || sketch.error_up < 0 ||
          sketch.error_down > error_limit || sketch.error_up > error_limit)
        in.fail("a quantile sketch disagrees with its moments");
      sketch.items.resize(in.count(16));
      std::int64_t weight = 0;
      for (std::size_t i = 0; i < sketch.items.size(); ++i) {
        auto& item = sketch.items[i];
        item.value = in.f64();
        item.weight = in.i64();
        if (std::isnan(item.value) || item.weight < 1 || item.weight > sketch.total - weight ||
            (i > 0 && item.value < sketch.items[i - 1].value))
          in.fail("a quantile sketch that is not sorted or whose weights do not add up");
        weight += item.weight;
      }
      if (weight != sketch.total) in.fail("a quantile sketch whose weights do not add up");
    }
    return n;
  }

  // [first, end) member ranges added so far: finished blocks (neighbours joined) and the started
  // part of each block in progress.
  std::vector<std::pair<long, long>> added_member_ranges() const {
    std::vector<std::pair<long, long>> ranges;
    auto add = [&](long first, long end) {
      if (!ranges.empty() && ranges.back().second == first)
        ranges.back().second = end;
      else
        ranges.emplace_back(first, end);
    };
    for (long b = 0; b < blocks_; ++b) {
      const long first = b * statistics_block;
      if (block_done_[static_cast<std::size_t>(b)])
        add(first, std::min(members_total_, first + statistics_block));
      else if (const auto it = in_progress_.find(b); it != in_progress_.end())
        add(first, it->second.next_member);
    }
    return ranges;
  }

  // Down compactions at even indices, up at odd (banner): errors of both signs in equal measure.
  static bool compacts_down(long index) { return (index & 1) == 0; }

  // Node (level, index) of the fixed tree from its two children (the banner's merge rules).
  node combine_nodes(node&& left, node&& right, long index) const {
    node parent;
    parent.moments.resize(width_);
    for (std::size_t c = 0; c < width_; ++c) parent.moments[c] = statistics_detail::merge(left.moments[c], right.moments[c]);
    if (!left.sketches.empty()) {
      parent.sketches.resize(width_);
      for (std::size_t c = 0; c < width_; ++c)
        parent.sketches[c] = statistics_detail::merge(left.sketches[c], right.sketches[c], sketch_items_, compacts_down(index));
    }
    return parent;
  }
  void insert_tree_node(int level, long index, node&& n) {
    tree_.insert_node(level, index, std::move(n), [this](node&& left, node&& right, int, long parent_index) {
      return combine_nodes(std::move(left), std::move(right), parent_index);
    });
  }

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
    insert_tree_node(0, b, std::move(leaf));
    block_done_[static_cast<std::size_t>(b)] = 1;

    for (replicate_cell& cell : block.cells) {
      const long r = cell.replicate;
      insert_replicate_node(r, 0, b - replicate_first_block(r), std::move(cell.means));
    }
  }

  // Replicate r's tree has one leaf per block the replicate touches.
  long replicate_first_block(long r) const { return r * members_per_replicate_ / statistics_block; }
  long replicate_blocks(long r) const {
    return ((r + 1) * members_per_replicate_ - 1) / statistics_block - replicate_first_block(r) + 1;
  }

  // A cell (level 0) or a finished subtree of cells into replicate r's tree; a completed tree leaves
  // the replicate's mean in replicate_means_.
  void insert_replicate_node(long r, int level, long index, replicate_node&& cells) {
    auto it = replicate_trees_.find(r);
    if (it == replicate_trees_.end())
      it = replicate_trees_.emplace(r, statistics_detail::fixed_pairwise_tree<replicate_node>(replicate_blocks(r))).first;
    it->second.insert_node(level, index, std::move(cells), [this](replicate_node&& left, replicate_node&& right, int, long) {
      replicate_node parent(width_);
      for (std::size_t c = 0; c < width_; ++c) parent[c] = statistics_detail::merge(left[c], right[c]);
      return parent;
    });
    if (it->second.complete()) {
      std::copy(it->second.root().begin(), it->second.root().end(),
                replicate_means_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * width_));
      replicate_done_[static_cast<std::size_t>(r)] = 1;
      replicate_trees_.erase(it);
    }
  }

  // s_R / sqrt(R') over the replicates with values in slice c, of their estimate(cell) (their means by
  // default), two-pass in replicate order; R' into *present where asked.
  template <class Estimate = double (*)(const statistics_detail::mean_accumulator&)>
  double replicate_stderr(std::size_t c, Estimate estimate = [](const statistics_detail::mean_accumulator& m) { return m.mean; },
                          std::int64_t* present_out = nullptr) const {
    long present = 0;
    double sum = 0.0;
    for (long r = 0; r < replicates_; ++r) {
      const statistics_detail::mean_accumulator& m = replicate_means_[static_cast<std::size_t>(r) * width_ + c];
      if (m.n == 0) continue;
      ++present;
      sum += estimate(m);
    }
    if (present_out) *present_out = present;
    if (present < 2) return std::numeric_limits<double>::quiet_NaN();
    const double mean_of_estimates = sum / static_cast<double>(present);
    double squares = 0.0;
    for (long r = 0; r < replicates_; ++r) {
      const statistics_detail::mean_accumulator& m = replicate_means_[static_cast<std::size_t>(r) * width_ + c];
      if (m.n == 0) continue;
      squares += (estimate(m) - mean_of_estimates) * (estimate(m) - mean_of_estimates);
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
  std::vector<double> thresholds_;  // [W] or empty
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
  std::vector<char> replicate_done_;                                  // [replicate]: its mean is final
  std::vector<double> exact_values_;                                  // [member][W], exact mode only
};

}  // namespace lockstep::study
