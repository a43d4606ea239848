// Binomial tree over p ranks rooted anywhere (Sanders et al. §13.1.1).
//
// In root-relative numbering (vrank = (rank - root) mod p), a vrank with k trailing zero bits
// has parent vrank - 2^k and children vrank + 2^j for j < k (the root: j < ⌈log p⌉), dropping
// those >= p: the tree for the next power of two with the surplus nodes removed.
//
//        0            children are listed highest dimension first: the order that gives
//      / | \          broadcast its ⌈log p⌉(α + βn) bound (Thm 13.1, Exercise 13.1).
//     4  2  1
//     | \  \   (subtrees of 4 and 2)
//     6 5  3
//     |
//     7
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "patterns/rank_mod.hpp"

namespace fabcoll {

class BinomialTree {
 public:
  BinomialTree(int p, int root) : p_(p), root_(root) {}

  [[nodiscard]] int size() const { return p_; }
  [[nodiscard]] int vrank(int rank) const { return rank_mod(rank - root_, p_); }
  [[nodiscard]] int rank(int vrank) const { return rank_mod(vrank + root_, p_); }
  /// ⌈log2 p⌉: the height of the tree.
  [[nodiscard]] int height() const { return ceil_log2(p_); }

  /// Parent of `rank`, or -1 for the root.
  [[nodiscard]] int parent(int r) const {
    const int v = vrank(r);
    if (v == 0) return -1;
    return rank(v & (v - 1));  // clear the lowest set bit: v - 2^k
  }

  /// At most ⌈log2 p⌉ ≤ 31 children: held in place (a per-call vector cost a small broadcast
  /// or reduce about 2% in malloc and free, by perf).
  class ChildList {
   public:
    [[nodiscard]] const int* begin() const { return ranks_.data(); }
    [[nodiscard]] const int* end() const { return ranks_.data() + n_; }
    [[nodiscard]] std::size_t size() const { return n_; }
    [[nodiscard]] bool empty() const { return n_ == 0; }
    [[nodiscard]] int operator[](std::size_t i) const { return ranks_[i]; }
    void push_back(int r) { ranks_[n_++] = r; }

   private:
    std::array<int, 32> ranks_{};
    std::size_t n_ = 0;
  };

  /// Children of `rank`, highest dimension first (the largest subtrees when p = 2^d).
  [[nodiscard]] ChildList children(int r) const {
    ChildList out;
    const int v = vrank(r);
    for (int j = child_dims(v) - 1; j >= 0; --j) {
      const int c = v + (1 << j);
      if (c < p_) out.push_back(rank(c));
    }
    return out;
  }

  /// Number of ranks in the subtree rooted at `rank` (itself included).
  [[nodiscard]] int subtree_size(int r) const {
    const int v = vrank(r);
    const int span = v == 0 ? (1 << height()) : (v & -v);
    return std::min(span, p_ - v);
  }

  static int ceil_log2(int p) {
    return p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p - 1)));
  }

 private:
  // vrank 0 may have children along every dimension; others along their trailing zeros.
  [[nodiscard]] int child_dims(int v) const {
    return v == 0 ? height() : std::countr_zero(static_cast<unsigned>(v));
  }
  int p_;
  int root_;
};

}  // namespace fabcoll
