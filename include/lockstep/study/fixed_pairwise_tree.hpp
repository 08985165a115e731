// lockstep/study/fixed_pairwise_tree.hpp — the fixed binary combination tree over block indices that
// makes ensemble statistics bitwise independent of the order in which blocks complete.
#pragma once

#include <algorithm>
#include <map>
#include <utility>

namespace lockstep::study::statistics_detail {

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
    insert_node(0, leaf, std::move(node), std::forward<Combine>(combine));
  }

  // A finished subtree, node (level, index), e.g. one another process formed from its own leaves:
  // it climbs exactly as its leaves would have, so the root does not depend on who formed it. The
  // caller guarantees that none of its leaves is in the tree yet and that valid_node(level, index).
  template <class Combine>
  void insert_node(int level, long index, Node node, Combine&& combine) {
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
  long leaves() const { return leaves_; }
  int top_level() const { return top_level_; }

  // Whether (level, index) names a node of this tree with at least one leaf.
  bool valid_node(int level, long index) const {
    return level >= 0 && level <= top_level_ && index >= 0 && index <= ((leaves_ - 1) >> level);
  }
  // The leaves node (level, index) covers: [first, last).
  std::pair<long, long> leaf_range(int level, long index) const {
    return {index << level, std::min(leaves_, (index + 1) << level)};
  }

  // f(level, index, node) for every node not yet combined into a parent, in (level, index) order.
  template <class F>
  void for_each_pending(F&& f) const {
    for (const auto& [key, node] : pending_) f(key.first, key.second, node);
  }

 private:
  long leaves_;
  int top_level_ = 0;
  std::map<std::pair<int, long>, Node> pending_;
};

}  // namespace lockstep::study::statistics_detail
