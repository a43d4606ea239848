// The rank patterns alone: binomial tree and hypercube properties for every p up to 300.
#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <vector>

#include "patterns/binomial_tree.hpp"
#include "patterns/hypercube.hpp"
#include "patterns/rank_mod.hpp"

namespace fabcoll {
namespace {

TEST(RankMod, MatchesTheDivisionForEveryRemainder) {
  for (int p = 1; p <= 17; ++p) {
    for (int x = -4 * p - 3; x <= 4 * p + 3; ++x) {
      const int want = ((x % p) + p) % p;
      EXPECT_EQ(rank_mod(x, p), want) << "x = " << x << ", p = " << p;
    }
  }
  constexpr int kMax = std::numeric_limits<int>::max();
  constexpr int kMin = std::numeric_limits<int>::min();
  for (const int p : {1, 2, 3, 1000, kMax / 2 + 1, kMax}) {
    for (const int x : {kMin, kMin + 1, -p, 0, p - 1, kMax - 1, kMax}) {
      const long long want = ((static_cast<long long>(x) % p) + p) % p;  // no overflow
      EXPECT_EQ(rank_mod(x, p), want) << "x = " << x << ", p = " << p;
    }
  }
}

TEST(BinomialTree, SpansEveryRankOnceForAnyRoot) {
  for (int p = 1; p <= 130; ++p) {
    for (const int root : {0, 1, p / 2, p - 1}) {
      if (root >= p) continue;
      const BinomialTree t{p, root};
      EXPECT_EQ(t.parent(root), -1);
      int edges = 0;
      for (int r = 0; r < p; ++r) {
        for (const int c : t.children(r)) {
          EXPECT_EQ(t.parent(c), r) << "p=" << p << " root=" << root;
          ++edges;
        }
        // subtree sizes add up: 1 + sum of children's subtrees
        int sum = 1;
        for (const int c : t.children(r)) sum += t.subtree_size(c);
        EXPECT_EQ(sum, t.subtree_size(r)) << "p=" << p << " r=" << r;
      }
      EXPECT_EQ(edges, p - 1);
      EXPECT_EQ(t.subtree_size(root), p);
    }
  }
}

// Children come in decreasing dimension (2^j first): for p = 2^d these are the largest
// subtrees first (Exercise 13.1); with the surplus dropped a high-dimension subtree may be
// smaller, but its height j still finishes by step ⌈log p⌉.
TEST(BinomialTree, ChildrenHighestDimensionFirstAndHeightIsCeilLog) {
  for (int p = 1; p <= 300; ++p) {
    const BinomialTree t{p, 0};
    int max_depth = 0;
    for (int r = 0; r < p; ++r) {
      const auto kids = t.children(r);
      for (std::size_t i = 1; i < kids.size(); ++i) {
        EXPECT_GT(t.vrank(kids[i - 1]), t.vrank(kids[i]));
        if ((p & (p - 1)) == 0) {
          EXPECT_GE(t.subtree_size(kids[i - 1]), t.subtree_size(kids[i]));
        }
      }
      int depth = 0;
      for (int x = r; t.parent(x) >= 0; x = t.parent(x)) ++depth;
      max_depth = std::max(max_depth, depth);
    }
    EXPECT_LE(max_depth, BinomialTree::ceil_log2(p));
    EXPECT_EQ(static_cast<int>(t.children(0).size()), BinomialTree::ceil_log2(p));
  }
}

TEST(Hypercube, FoldingKeepsOrderAndCoversAllRanks) {
  for (int p = 1; p <= 300; ++p) {
    const Hypercube cube{p};
    EXPECT_EQ(cube.cube_size() + cube.surplus(), p);
    EXPECT_LE(cube.cube_size(), p);
    EXPECT_GT(2 * cube.cube_size(), p);
    std::vector<int> members;
    for (int r = 0; r < p; ++r) {
      if (cube.is_extra(r)) {
        EXPECT_TRUE(cube.has_extra(r + 1));
        continue;
      }
      members.push_back(r);
      EXPECT_EQ(cube.rank(cube.vrank(r)), r);
    }
    ASSERT_EQ(static_cast<int>(members.size()), cube.cube_size());
    for (std::size_t v = 0; v < members.size(); ++v)
      EXPECT_EQ(cube.vrank(members[v]), static_cast<int>(v));  // rank order preserved
    for (int v = 0; v < cube.cube_size(); ++v)
      for (int i = 0; i < cube.dim(); ++i)
        EXPECT_EQ(Hypercube::partner(Hypercube::partner(v, i), i), v);
  }
}

}  // namespace
}  // namespace fabcoll
