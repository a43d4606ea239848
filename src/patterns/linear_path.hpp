// A path (unary tree) through all p ranks starting at the root (Sanders et al. §13.1.4, the
// linear pipeline): position v = (rank - root) mod p; v receives from v-1 and sends to v+1.
//
//   root → root+1 → root+2 → … → root+p-1 (mod p)
#pragma once

namespace fabcoll {

class LinearPath {
 public:
  LinearPath(int p, int root) : p_(p), root_(root) {}

  [[nodiscard]] int size() const { return p_; }
  [[nodiscard]] int position(int rank) const { return (rank - root_ + p_) % p_; }
  [[nodiscard]] int rank(int position) const { return (position + root_) % p_; }
  /// The previous rank on the path, or -1 for the root.
  [[nodiscard]] int prev(int r) const { return position(r) == 0 ? -1 : rank(position(r) - 1); }
  /// The next rank on the path, or -1 for the last one.
  [[nodiscard]] int next(int r) const { return position(r) == p_ - 1 ? -1 : rank(position(r) + 1); }

 private:
  int p_;
  int root_;
};

}  // namespace fabcoll
