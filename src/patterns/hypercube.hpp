// Hypercube of dimension d = ⌊log2 p⌋ (Sanders et al. §13.2.1), with the folding of the
// p - 2^d surplus ranks used by MPICH and the 13-rank Rabenseifner example (002_…): among the
// first 2r ranks (r = p - 2^d) each even rank is an "extra" that hands its data to the odd
// rank above it and sits out; the others form the cube, renumbered in rank order so that
// non-commutative operators keep their order.
//
//   p = 6, r = 2:   0→1  2→3  4  5        cube ranks: 1→0, 3→1, 4→2, 5→3
//                       \  /   \ /
//                      dimension 0, 1 exchanges among {1, 3, 4, 5}
#pragma once

#include <bit>

namespace fabcoll {

class Hypercube {
 public:
  explicit Hypercube(int p)
      : p_(p),
        d_(p <= 1 ? 0 : static_cast<int>(std::bit_width(static_cast<unsigned>(p))) - 1),
        surplus_(p - (1 << d_)) {}

  [[nodiscard]] int dim() const { return d_; }
  [[nodiscard]] int cube_size() const { return 1 << d_; }
  [[nodiscard]] int surplus() const { return surplus_; }
  [[nodiscard]] bool power_of_two() const { return surplus_ == 0; }

  /// An extra rank folds into rank + 1 and takes no part in the cube.
  [[nodiscard]] bool is_extra(int rank) const { return rank < 2 * surplus_ && rank % 2 == 0; }
  /// A cube rank that absorbs an extra (the extra is rank - 1).
  [[nodiscard]] bool has_extra(int rank) const { return rank < 2 * surplus_ && rank % 2 == 1; }
  /// Position in the cube (0 … 2^d - 1) of a non-extra rank.
  [[nodiscard]] int vrank(int rank) const {
    return rank < 2 * surplus_ ? rank / 2 : rank - surplus_;
  }
  /// The rank at cube position v.
  [[nodiscard]] int rank(int v) const { return v < surplus_ ? 2 * v + 1 : v + surplus_; }
  /// The partner of cube position v along dimension i.
  [[nodiscard]] static int partner(int v, int i) { return v ^ (1 << i); }

 private:
  int p_;
  int d_;
  int surplus_;
};

}  // namespace fabcoll
