// In-order binary tree over p ranks with any root (Sanders et al. §13.1.3, Fig. 13.5).
//
// buildTree(a, b, x, y) adopts root x and parent y for the ranks a..b and recurses into
// a..x-1 and x+1..b, placing each subtree's root in the middle ⌊(lo + hi) / 2⌋ of its range.
// So every subtree is a contiguous rank range, the left subtree holds the lower ranks and the
// right subtree the higher ones (what non-commutative reduction and prefix sums rely on), and
// the height is ≤ ⌈log p⌉ for any root (Exercise 13.3); = ⌊log p⌋ when the root is the middle
// rank ⌊(p-1)/2⌋ (perfectly balanced, L in Lemma 13.2).
//
//          3              p = 7, root 3: ranges 0..2 | 4..6
//        /   \            a rank only walks its own branch of the recursion: O(log p)
//       1     5           time, no communication.
//      / \   / \          (left subtree: lower ranks; right subtree: higher ranks)
//     0   2 4   6
#pragma once

#include <algorithm>
#include <bit>

namespace fabcoll {

class InorderBinaryTree {
 public:
  /// One rank's view: its parent and children (-1: none), its subtree's rank range lo..hi
  /// (inclusive) and its depth (the root has depth 0).
  struct Node {
    int parent = -1;
    int left = -1;
    int right = -1;
    int lo = 0;
    int hi = -1;
    int depth = 0;
  };

  InorderBinaryTree(int p, int root) : p_(p), root_(root) {}

  [[nodiscard]] int size() const { return p_; }
  [[nodiscard]] int root() const { return root_; }

  /// The middle of lo..hi where buildTree places a subtree's root.
  [[nodiscard]] static int middle(int lo, int hi) { return lo + (hi - lo) / 2; }

  /// Walks buildTree from the root down the branch that contains rank r.
  [[nodiscard]] Node node(int r) const {
    int a = 0;
    int b = p_ - 1;
    int x = root_;
    int y = -1;
    int depth = 0;
    while (r != x) {
      y = x;
      if (r < x) {
        b = x - 1;
      } else {
        a = x + 1;
      }
      x = middle(a, b);
      ++depth;
    }
    Node n;
    n.parent = y;
    n.left = a < x ? middle(a, x - 1) : -1;
    n.right = x < b ? middle(x + 1, b) : -1;
    n.lo = a;
    n.hi = b;
    n.depth = depth;
    return n;
  }

  [[nodiscard]] int parent(int r) const { return node(r).parent; }
  [[nodiscard]] int left(int r) const { return node(r).left; }
  [[nodiscard]] int right(int r) const { return node(r).right; }

  /// Height (longest root-to-leaf path in edges): 1 + the height of the larger side, whose
  /// perfectly balanced subtree of m nodes has height ⌊log m⌋.
  [[nodiscard]] int height() const {
    if (p_ <= 1) return 0;
    const int m = std::max(root_, p_ - 1 - root_);
    return m == 0 ? 0 : 1 + floor_log2(m);
  }

  /// The root of the perfectly balanced tree (height ⌊log p⌋).
  [[nodiscard]] static int balanced_root(int p) { return (p - 1) / 2; }
  static int floor_log2(int m) {
    return m <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(m))) - 1;
  }

 private:
  int p_;
  int root_;
};

}  // namespace fabcoll
