// Ring over p ranks and the even block partition that ring algorithms use
// (Grama et al. ch. 4 / 003_…, 004_… Algorithms 4.4–4.5: all-to-all broadcast and reduction
// on a ring; the ring all-gather of van de Geijn's long-message broadcast).
//
// In the all-gather at step s = 0 … p-2 rank r sends block (r - s) mod p to its right
// neighbour and receives block (r - s - 1) mod p from its left neighbour, so after p-1 steps
// every rank holds all p blocks and each block travelled p-1 links.
//
//   0 → 1 → 2 → … → p-1 → 0      step s: r sends block r-s, receives block r-s-1
#pragma once

#include <cstddef>

#include "patterns/rank_mod.hpp"

namespace fabcoll {

class Ring {
 public:
  explicit Ring(int p) : p_(p) {}

  [[nodiscard]] int size() const { return p_; }
  [[nodiscard]] int mod(int x) const { return rank_mod(x, p_); }
  /// The neighbour a rank receives from.
  [[nodiscard]] int left(int r) const { return mod(r - 1); }
  /// The neighbour a rank sends to.
  [[nodiscard]] int right(int r) const { return mod(r + 1); }
  /// The block rank r sends at step s (all-gather order: its own block first).
  [[nodiscard]] int send_block(int r, int s) const { return mod(r - s); }
  /// The block rank r receives at step s (its left neighbour's send_block).
  [[nodiscard]] int recv_block(int r, int s) const { return mod(r - s - 1); }

 private:
  int p_;
};

/// `count` elements split into `parts` blocks on element boundaries: the first count % parts
/// blocks hold one element more. Blocks may be empty (count < parts).
class EvenBlocks {
 public:
  EvenBlocks(std::size_t count, std::size_t parts)
      : q_(parts == 0 ? 0 : count / parts), r_(parts == 0 ? 0 : count % parts) {}

  /// First element of block i (i = parts gives count).
  [[nodiscard]] std::size_t begin(std::size_t i) const { return i * q_ + (i < r_ ? i : r_); }
  /// Elements in block i.
  [[nodiscard]] std::size_t size(std::size_t i) const { return q_ + (i < r_ ? 1 : 0); }
  /// Elements in blocks i … j-1.
  [[nodiscard]] std::size_t span(std::size_t i, std::size_t j) const { return begin(j) - begin(i); }
  /// The largest block: ⌈count / parts⌉.
  [[nodiscard]] std::size_t max_size() const { return q_ + (r_ > 0 ? 1 : 0); }

 private:
  std::size_t q_;
  std::size_t r_;
};

}  // namespace fabcoll
