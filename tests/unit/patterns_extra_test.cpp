// The broadcast/reduce rank patterns alone: in-order binary tree (Fig. 13.5), ring and its
// block partition, linear path. Properties for every p up to 300 (and every root for p ≤ 64).
#include <gtest/gtest.h>

#include <vector>

#include "patterns/inorder_binary_tree.hpp"
#include "patterns/linear_path.hpp"
#include "patterns/ring.hpp"

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

}  // namespace
}  // namespace fabcoll
