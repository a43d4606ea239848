// A p-node 2-D mesh (torus) in row-major rank order, for the all-to-all broadcast of Grama et
// al. ch. 4, Algorithm 4.6 (004_…): a ring in every row, then a ring in every column.
//
// The text takes a square √p × √p mesh; for any p we take rows = the largest divisor of p that
// is ≤ √p and cols = p / rows (a prime p gives a single row: the plain ring). Row i holds the
// consecutive ranks i·cols … i·cols + cols - 1, so a row's blocks are one contiguous range.
//
//   p = 6:  0 1 2      row rings:    0→1→2→0, 3→4→5→3
//           3 4 5      column rings: 0→3→0, 1→4→1, 2→5→2
#pragma once

namespace fabcoll {

class Mesh2d {
 public:
  explicit Mesh2d(int p) : rows_(1), cols_(p) {
    for (int r = 1; r * r <= p; ++r)
      if (p % r == 0) rows_ = r;
    cols_ = p / rows_;
  }

  [[nodiscard]] int rows() const { return rows_; }
  [[nodiscard]] int cols() const { return cols_; }
  [[nodiscard]] int row(int rank) const { return rank / cols_; }
  [[nodiscard]] int col(int rank) const { return rank % cols_; }
  [[nodiscard]] int rank(int row, int col) const { return row * cols_ + col; }

 private:
  int rows_;
  int cols_;
};

}  // namespace fabcoll
