// The two trees of Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
// reduction and scan" (Parallel Computing 2009); Sanders et al. §13.1.4: run two binary-tree
// broadcasts at once, each with half of the data, and make every interior node of one tree a
// leaf of the other, so that no node forwards more than the data it receives.
//
// Over m positions (the p - 1 non-root ranks) T1 is the in-order binary tree whose leaves are
// exactly the even positions: position x has height h = ctz(x + 1), children x ∓ 2^(h-1), the
// right child walked down its left spine while it is ≥ m. T2 is T1 mirrored (x → m-1-x) when
// m is even and shifted by one (x → x+1 mod m) when m is odd; either way T2's leaves are T1's
// interior nodes (for odd m position 0 is a leaf in both). The broadcast root feeds both roots.
//
//   m = 6:  T1 = 3(1(0,2), 5(4))      leaves 0 2 4    interior 1 3 5
//           T2 = 2(4(5,3), 0(1))      leaves 5 3 1    interior 4 2 0
//
// Edge colouring (the paper's schedule): edge (t, x) joins x to its parent in tree t. Every
// position has one parent per tree, every sender (a position, or the root feeding both tree
// roots) at most two children, so the sender/receiver graph is bipartite of degree ≤ 2 and its
// edges 2-colour (alternate along each path and even cycle): a rank's two incoming edges differ,
// and so do its two outgoing ones. In step s every rank receives and sends along its edges of
// colour s mod 2, and in steady state receives and sends one packet per step.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

namespace fabcoll {

class TwoTree {
 public:
  explicit TwoTree(int m) : m_(m) {}

  [[nodiscard]] int size() const { return m_; }

  /// The root position of tree t (0 or 1), -1 when m = 0.
  [[nodiscard]] int root(int t) const { return m_ <= 0 ? -1 : from_t1(t, t1_root()); }
  /// The parent position of x in tree t, or -1 for the tree's root (fed by the broadcast root).
  [[nodiscard]] int parent(int t, int x) const {
    const int y = to_t1(t, x);
    int node = t1_root();
    int par = -1;
    while (node != y) {
      par = node;
      node = y < node ? t1_left(node) : t1_right(node);
    }
    return par < 0 ? -1 : from_t1(t, par);
  }
  /// The children of x in tree t (-1: none), left child first in T1's orientation.
  [[nodiscard]] std::array<int, 2> children(int t, int x) const {
    const int y = to_t1(t, x);
    const int l = t1_left(y);
    const int r = t1_right(y);
    return {l < 0 ? -1 : from_t1(t, l), r < 0 ? -1 : from_t1(t, r)};
  }
  /// The colour (0 or 1) of every edge, indexed 2x + t for the edge from x's parent in tree t
  /// to x. O(m) time and space.
  [[nodiscard]] std::vector<std::uint8_t> edge_colors() const {
    const auto m = static_cast<std::size_t>(m_);
    std::vector<std::uint8_t> color(2 * m, kNone);
    // out[s] (s < m: a position, s = m: the broadcast root): the edges it sends on.
    std::vector<std::array<int, 2>> out(m + 1, std::array<int, 2>{-1, -1});
    std::vector<int> sender(2 * m, -1);
    for (int t = 0; t < 2; ++t) {
      const int r = root(t);
      if (r < 0) continue;
      out[m][static_cast<std::size_t>(t)] = 2 * r + t;
      sender[static_cast<std::size_t>(2 * r + t)] = m_;
      for (int x = 0; x < m_; ++x) {
        const std::array<int, 2> kids = children(t, x);
        for (int j = 0; j < 2; ++j) {
          if (kids[j] < 0) continue;
          out[static_cast<std::size_t>(x)][static_cast<std::size_t>(j)] = 2 * kids[j] + t;
          sender[static_cast<std::size_t>(2 * kids[j] + t)] = x;
        }
      }
    }
    const auto other_at_sender = [&](int e) {
      const auto& o = out[static_cast<std::size_t>(sender[static_cast<std::size_t>(e)])];
      return o[0] == e ? o[1] : o[0];
    };
    // Alternate colours along a component, starting at edge e with colour c: through the
    // receiver (e ^ 1, its other incoming edge), then through that edge's sender, and so on.
    const auto walk = [&](int e, std::uint8_t c) {
      while (e >= 0 && color[static_cast<std::size_t>(e)] == kNone) {
        color[static_cast<std::size_t>(e)] = c;
        const int f = e ^ 1;
        if (color[static_cast<std::size_t>(f)] != kNone) break;
        color[static_cast<std::size_t>(f)] = static_cast<std::uint8_t>(1 - c);
        e = other_at_sender(f);
      }
    };
    // Paths first, from a sender with a single edge; then the remaining (even) cycles.
    for (std::size_t s = 0; s <= m; ++s) {
      const auto& o = out[s];
      if ((o[0] < 0) != (o[1] < 0)) walk(o[0] >= 0 ? o[0] : o[1], 0);
    }
    for (std::size_t e = 0; e < 2 * m; ++e)
      if (color[e] == kNone) walk(static_cast<int>(e), 0);
    return color;
  }

  /// Height of both trees (edges on the longest root-to-leaf path).
  [[nodiscard]] int height() const {
    if (m_ <= 1) return 0;
    return static_cast<int>(std::bit_width(static_cast<unsigned>(m_))) - 1;
  }

 private:
  static constexpr std::uint8_t kNone = 2;
  static int level(int x) { return std::countr_zero(static_cast<unsigned>(x + 1)); }
  [[nodiscard]] int t1_root() const {
    return (1 << (static_cast<int>(std::bit_width(static_cast<unsigned>(m_))) - 1)) - 1;
  }
  [[nodiscard]] static int t1_left(int x) {
    const int h = level(x);
    return h == 0 ? -1 : x - (1 << (h - 1));
  }
  [[nodiscard]] int t1_right(int x) const {
    const int h = level(x);
    if (h == 0) return -1;
    int c = x + (1 << (h - 1));
    while (c >= m_) {  // walk down the left spine of the missing right subtree
      const int hc = level(c);
      if (hc == 0) return -1;
      c -= 1 << (hc - 1);
    }
    return c;
  }
  // Position in T1 of tree t's position x, and back.
  [[nodiscard]] int to_t1(int t, int x) const {
    if (t == 0) return x;
    return m_ % 2 == 0 ? m_ - 1 - x : (x - 1 + m_) % m_;
  }
  [[nodiscard]] int from_t1(int t, int y) const {
    if (t == 0) return y;
    return m_ % 2 == 0 ? m_ - 1 - y : (y + 1) % m_;
  }
  int m_;
};

}  // namespace fabcoll
