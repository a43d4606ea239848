// Bruck's all-to-all (index algorithm). Bruck et al. 1997; MPICH's short-message all-to-all
// (002_…: "Bruck's algorithm (for < 256 bytes)", a variation of the dissemination pattern):
//   T(n, p) = Σ_{b < ⌈log p⌉} (α + βn·c_b),  c_b = #{0 ≤ k < p : bit b of k is 1}
//   for p = 2^d: log p (α + βnp/2)            n = bytes per block
// plus the model's local-copy term (δ; the texts leave copies out): 2δnp for the rotation and
// the unrotation, 2δn·c_b for each round's packing and unpacking.
// Preconditions: none (any p).
// After a local rotation, position k of PE i holds the message that must travel k ranks
// forward. In round b every message whose distance has bit b set moves 2^b ranks forward (one
// packed message to i + 2^b); after the last round position k of PE i holds m_{i-k, i}.
//
//   rotate: W[k] = m_{i, i+k}
//   round b: W[k] for k with bit b → PE i+2^b,  ← PE i-2^b
//   unrotate: recv[i-k] = W[k]
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> alltoall_bruck(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  const auto np = static_cast<std::size_t>(p);
  const MutableBytes w = ch.scratch(np * block);
  auto at = [&](MutableBytes buf, int s) {
    return buf.subspan(static_cast<std::size_t>(s) * block, block);
  };
  for (int k = 0; k < p; ++k)
    ch.copy(at(w, k), send.subspan(static_cast<std::size_t>(ring.mod(i + k)) * block, block));
  const MutableBytes out = ch.scratch((np / 2 + 1) * block);
  const MutableBytes in = ch.scratch((np / 2 + 1) * block);
  for (int b = 0; (1 << b) < p; ++b) {
    const int dist = 1 << b;
    std::size_t q = 0;
    for (int k = dist; k < p; ++k) {
      if ((k & dist) == 0) continue;
      ch.copy(out.subspan(q * block, block), at(w, k));
      ++q;
    }
    Transfer t_out =
        ch.send(ring.mod(i + dist), out.first(q * block), static_cast<std::uint32_t>(b));
    Transfer t_in = ch.recv(ring.mod(i - dist), in.first(q * block), static_cast<std::uint32_t>(b));
    co_await t_out;
    co_await t_in;
    q = 0;
    for (int k = dist; k < p; ++k) {
      if ((k & dist) == 0) continue;
      ch.copy(at(w, k), in.subspan(q * block, block));
      ++q;
    }
  }
  for (int k = 0; k < p; ++k) ch.copy(at(recv, ring.mod(i - k)), at(w, k));
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_bruck(ch, bytes_of(a.sendbuf, np * a.bytes()),
                        bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  // δ: the rotation and the final unrotation (np each), and each round's packing and
  // unpacking of the blocks it moves.
  double t = 2 * q.m.copy * q.n * q.p;
  for (int b = 0; b < BinomialTree::ceil_log2(q.p); ++b) {
    int c = 0;  // distances k < p with bit b set
    for (int k = 0; k < q.p; ++k) c += (k >> b) & 1;
    t += q.m.alpha + q.m.beta * q.n * c + 2 * q.m.copy * q.n * c;
  }
  return t;
}
}  // namespace

const Algorithm kAlltoallBruck{
    .name = "bruck",
    .coll = Collective::alltoall,
    .reference = "Bruck et al. 1997 (index algorithm); MPICH short-message all-to-all (002_…)",
    .formula =
        "Σ_{b<⌈log p⌉}(α + (β + 2δ)n·c_b) + 2δnp, c_b = #{k<p : bit b of k}; p = 2^d: "
        "log p(α + βnp/2) + δnp(2 + log p)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.BruckMatchesItsRoundCount",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
