// The broadcast/reduce rank patterns alone: in-order binary tree (Fig. 13.5), ring and its
// block partition, linear path. Properties for every p up to 300 (and every root for p ≤ 64).
#include <gtest/gtest.h>

#include <vector>

#include "patterns/inorder_binary_tree.hpp"
#include "patterns/linear_path.hpp"
#include "patterns/ring.hpp"
#include "patterns/two_tree.hpp"

namespace fabcoll {
namespace {

int ceil_log2(int p) {
  int d = 0;
  while ((1 << d) < p) ++d;
  return d;
}
int floor_log2(int p) {
  int d = 0;
  while ((2 << d) <= p) ++d;
  return d;
}

std::vector<int> roots_for(int p) {
  if (p <= 64) {
    std::vector<int> all;
    for (int r = 0; r < p; ++r) all.push_back(r);
    return all;
  }
  return {0, 1, p / 3, InorderBinaryTree::balanced_root(p), p - 2, p - 1};
}

// Parent/child links agree, every rank is reached once, subtrees are contiguous ranges split
// in order (left < node < right), and the height is ≤ ⌈log p⌉ for every root (Exercise 13.3).
TEST(InorderBinaryTree, InOrderContiguousSpanningTreeForAnyRoot) {
  for (int p = 1; p <= 300; ++p) {
    for (const int root : roots_for(p)) {
      const InorderBinaryTree t{p, root};
      int edges = 0;
      int max_depth = 0;
      for (int r = 0; r < p; ++r) {
        const auto n = t.node(r);
        ASSERT_LE(n.lo, r);
        ASSERT_GE(n.hi, r);
        if (r == root) {
          EXPECT_EQ(n.parent, -1);
          EXPECT_EQ(n.lo, 0);
          EXPECT_EQ(n.hi, p - 1);
          EXPECT_EQ(n.depth, 0);
        } else {
          ASSERT_GE(n.parent, 0);
          const auto pn = t.node(n.parent);
          EXPECT_TRUE(pn.left == r || pn.right == r) << "p=" << p << " root=" << root << " r=" << r;
          EXPECT_EQ(n.depth, pn.depth + 1);
        }
        // left subtree = lo..r-1, right subtree = r+1..hi, each rooted in its middle
        if (n.left >= 0) {
          const auto ln = t.node(n.left);
          EXPECT_EQ(ln.lo, n.lo);
          EXPECT_EQ(ln.hi, r - 1);
          EXPECT_EQ(ln.parent, r);
          EXPECT_EQ(n.left, InorderBinaryTree::middle(n.lo, r - 1));
          ++edges;
        } else {
          EXPECT_EQ(n.lo, r);
        }
        if (n.right >= 0) {
          const auto rn = t.node(n.right);
          EXPECT_EQ(rn.lo, r + 1);
          EXPECT_EQ(rn.hi, n.hi);
          EXPECT_EQ(rn.parent, r);
          EXPECT_EQ(n.right, InorderBinaryTree::middle(r + 1, n.hi));
          ++edges;
        } else {
          EXPECT_EQ(n.hi, r);
        }
        max_depth = std::max(max_depth, n.depth);
      }
      EXPECT_EQ(edges, p - 1);
      EXPECT_EQ(max_depth, t.height()) << "p=" << p << " root=" << root;
      EXPECT_LE(t.height(), ceil_log2(p)) << "p=" << p << " root=" << root;
    }
    // Perfectly balanced: the middle root gives height ⌊log p⌋ (L in Lemma 13.2).
    const InorderBinaryTree bal{p, InorderBinaryTree::balanced_root(p)};
    EXPECT_EQ(bal.height(), floor_log2(p)) << "p=" << p;
  }
}

TEST(InorderBinaryTree, SevenRanksMatchTheFigure) {
  const InorderBinaryTree t{7, 3};
  EXPECT_EQ(t.left(3), 1);
  EXPECT_EQ(t.right(3), 5);
  EXPECT_EQ(t.left(1), 0);
  EXPECT_EQ(t.right(1), 2);
  EXPECT_EQ(t.left(5), 4);
  EXPECT_EQ(t.right(5), 6);
  EXPECT_EQ(t.parent(6), 5);
  EXPECT_EQ(t.height(), 2);
}

// Ring all-gather order: after p-1 steps every rank has received every other block exactly
// once, and what r receives at step s is what its left neighbour sends at step s.
TEST(Ring, AllgatherStepsDeliverEveryBlockOnce) {
  for (int p = 1; p <= 300; ++p) {
    const Ring ring{p};
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(ring.right(ring.left(r)), r);
      EXPECT_EQ(ring.left(ring.right(r)), r);
      EXPECT_EQ(ring.send_block(r, 0), r);
      std::vector<int> seen(static_cast<std::size_t>(p), 0);
      seen[static_cast<std::size_t>(r)] = 1;
      for (int s = 0; s + 1 < p; ++s) {
        EXPECT_EQ(ring.recv_block(r, s), ring.send_block(ring.left(r), s));
        if (s > 0) {
          EXPECT_EQ(ring.send_block(r, s), ring.recv_block(r, s - 1));  // forwards what it got
        }
        ++seen[static_cast<std::size_t>(ring.recv_block(r, s))];
      }
      for (const int c : seen) EXPECT_EQ(c, 1) << "p=" << p << " r=" << r;
    }
  }
}

TEST(EvenBlocks, PartitionOnElementBoundaries) {
  for (std::size_t parts = 1; parts <= 300; parts += (parts < 40 ? 1 : 37)) {
    for (const std::size_t count : {std::size_t{0}, std::size_t{1}, parts - 1, parts, parts + 1,
                                    std::size_t{1000}, std::size_t{1001}}) {
      const EvenBlocks b{count, parts};
      std::size_t total = 0;
      for (std::size_t i = 0; i < parts; ++i) {
        EXPECT_EQ(b.begin(i), total);
        EXPECT_LE(b.size(i), b.max_size());
        EXPECT_GE(b.size(i) + 1, b.max_size());
        total += b.size(i);
      }
      EXPECT_EQ(total, count);
      EXPECT_EQ(b.begin(parts), count);
      EXPECT_EQ(b.max_size(), (count + parts - 1) / parts);
      EXPECT_EQ(b.span(0, parts), count);
    }
  }
}

TEST(LinearPath, VisitsEveryRankFromTheRoot) {
  for (int p = 1; p <= 300; ++p) {
    for (const int root : {0, p / 2, p - 1}) {
      const LinearPath path{p, root};
      EXPECT_EQ(path.prev(root), -1);
      int r = root;
      int steps = 0;
      while (path.next(r) >= 0) {
        EXPECT_EQ(path.prev(path.next(r)), r);
        r = path.next(r);
        ++steps;
      }
      EXPECT_EQ(steps, p - 1);
      EXPECT_EQ(path.position(r), p - 1);
    }
  }
}

// Both trees span the m positions in order (left subtree < node < right subtree), have height
// ⌊log m⌋, and no position is interior in both (Sanders–Speck–Träff): T1's leaves are exactly
// the even positions; for odd m only position 0 is a leaf in both.
TEST(TwoTree, ComplementaryInOrderTrees) {
  for (int m = 1; m <= 300; ++m) {
    const TwoTree tt{m};
    std::vector<int> interior(static_cast<std::size_t>(m), 0);
    for (int t = 0; t < 2; ++t) {
      int edges = 0;
      int max_depth = 0;
      for (int x = 0; x < m; ++x) {
        const auto kids = tt.children(t, x);
        int n_kids = 0;
        for (const int c : kids) {
          if (c < 0) continue;
          ASSERT_GE(c, 0);
          ASSERT_LT(c, m);
          EXPECT_EQ(tt.parent(t, c), x) << "m=" << m << " t=" << t;
          ++n_kids;
          ++edges;
        }
        if (n_kids > 0) ++interior[static_cast<std::size_t>(x)];
        if (t == 0) {
          EXPECT_EQ(n_kids > 0, x % 2 == 1) << "m=" << m << " x=" << x;
        }
        int depth = 0;
        for (int y = x; tt.parent(t, y) >= 0; y = tt.parent(t, y)) ++depth;
        max_depth = std::max(max_depth, depth);
      }
      EXPECT_EQ(tt.parent(t, tt.root(t)), -1);
      EXPECT_EQ(edges, m - 1) << "m=" << m << " t=" << t;
      EXPECT_EQ(max_depth, tt.height()) << "m=" << m << " t=" << t;
      EXPECT_EQ(tt.height(), floor_log2(m));
    }
    // In order (T1; T2 is its mirror or shift): every left descendant is smaller.
    for (int x = 0; x < m; ++x) {
      const auto kids = tt.children(0, x);
      if (kids[0] >= 0) {
        EXPECT_LT(kids[0], x);
      }
      if (kids[1] >= 0) {
        EXPECT_GT(kids[1], x);
      }
    }
    int both_leaf = 0;
    for (int x = 0; x < m; ++x) {
      EXPECT_LE(interior[static_cast<std::size_t>(x)], 1) << "m=" << m << " x=" << x;
      both_leaf += interior[static_cast<std::size_t>(x)] == 0 ? 1 : 0;
    }
    EXPECT_EQ(both_leaf, m % 2 == 1 ? 1 : 0) << "m=" << m;
  }
}

// The schedule's colouring: at every position the two incoming edges (one per tree) differ, and
// so do the outgoing ones of every sender (the broadcast root's two included).
TEST(TwoTree, EdgeColouringIsProper) {
  for (int m = 1; m <= 300; ++m) {
    const TwoTree tt{m};
    const std::vector<std::uint8_t> color = tt.edge_colors();
    ASSERT_EQ(color.size(), std::size_t(2 * m));
    for (int x = 0; x < m; ++x) {
      const std::size_t e0 = std::size_t(2 * x);
      ASSERT_LE(color[e0], 1);
      ASSERT_LE(color[e0 + 1], 1);
      EXPECT_NE(color[e0], color[e0 + 1]) << "m=" << m << " x=" << x;
      for (int t = 0; t < 2; ++t) {
        const auto kids = tt.children(t, x);
        if (kids[0] >= 0 && kids[1] >= 0) {
          EXPECT_NE(color[std::size_t(2 * kids[0] + t)], color[std::size_t(2 * kids[1] + t)])
              << "m=" << m << " x=" << x;
        }
      }
    }
    EXPECT_NE(color[std::size_t(2 * tt.root(0))], color[std::size_t(2 * tt.root(1) + 1)]);
  }
}

TEST(TwoTree, SixPositionsMatchTheHeaderPicture) {
  const TwoTree tt{6};
  EXPECT_EQ(tt.root(0), 3);
  EXPECT_EQ(tt.root(1), 2);
  EXPECT_EQ(tt.children(0, 5), (std::array<int, 2>{4, -1}));
  EXPECT_EQ(tt.children(1, 4), (std::array<int, 2>{5, 3}));
  EXPECT_EQ(tt.children(1, 0), (std::array<int, 2>{1, -1}));
}

}  // namespace
}  // namespace fabcoll
