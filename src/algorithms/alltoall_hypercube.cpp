// Hypercube all-to-all with indirect delivery. Sanders et al. §13.6.2 (Fig. 13.14), eq. (13.4);
// Grama et al. ch. 4 (003_…, all-to-all personalized on a hypercube):
//   T(n, p) = log p (α + βnp/2) + δnp(1 + log p)   n = bytes per block, p = 2^d
// (δ, the model's local-copy term, which the texts leave out: the first copy of the p blocks,
// then every round packs the p/2 leaving blocks and unpacks the p/2 arriving ones)
// Preconditions: p a power of two (the text's algorithm; no folding).
// Loop invariant (k = d-1 … 0): after iteration k every message m_xj sits on a PE of the
// k-dimensional subcube that contains j. Each PE keeps p messages, indexed by a key whose bits
// above k are the sender's (x) and whose bits up to k are the receiver's (j); a message crossing
// dimension k flips exactly key bit k, so it lands in the slot its partner just emptied.
//
//   k = 1: 0↔2 1↔3  (messages for the other 1-cube)
//   k = 0: 0↔1 2↔3  (messages for the other 0-cube)
//   end:   slot x of PE i holds m_xi
#include "algorithms/algorithms.hpp"
#include "patterns/hypercube.hpp"

namespace fabcoll::algorithms {

Task<> alltoall_hypercube(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const Hypercube cube{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  const auto half = static_cast<std::size_t>(p / 2);
  // M := { m_ij : j }, slot j (the key is all receiver bits before the first iteration).
  ch.copy(recv, send);
  const MutableBytes out = ch.scratch(half * block);
  const MutableBytes in = ch.scratch(half * block);
  auto slot = [&](int s) { return recv.subspan(static_cast<std::size_t>(s) * block, block); };
  for (int k = cube.dim() - 1; k >= 0; --k) {
    const int bit = 1 << k;
    const int partner = Hypercube::partner(i, k);
    // M_s: the messages whose key bit k differs from i's, in ascending key order. The partner
    // lists its M_s in the same order, so packed position q maps to the same slot here.
    std::size_t q = 0;
    for (int s = 0; s < p; ++s) {
      if ((s & bit) == (i & bit)) continue;
      ch.copy(out.subspan(q * block, block), slot(s));
      ++q;
    }
    Transfer t_out = ch.send(partner, out, static_cast<std::uint32_t>(k));
    Transfer t_in = ch.recv(partner, in, static_cast<std::uint32_t>(k));
    co_await t_out;
    co_await t_in;
    // M := M_r ∪ M \ M_s: the received messages take the emptied slots.
    q = 0;
    for (int s = 0; s < p; ++s) {
      if ((s & bit) == (i & bit)) continue;
      ch.copy(slot(s), in.subspan(q * block, block));
      ++q;
    }
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_hypercube(ch, bytes_of(a.sendbuf, np * a.bytes()),
                            bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  const Hypercube cube{q.p};
  // δ: the first copy of all p blocks, then per round the p/2 blocks packed and unpacked.
  return cube.dim() * (q.m.alpha + q.m.beta * q.n * q.p / 2) +
         q.m.copy * q.n * q.p * (1 + cube.dim());
}
}  // namespace

const Algorithm kAlltoallHypercube{
    .name = "hypercube",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. §13.6.2, eq. (13.4); Grama et al. ch. 4 (Table 4.1)",
    .formula = "log p (α + βnp/2) + δnp(1 + log p), n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = true,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.HypercubeMatchesSection13_6_2",
    .written_share = written_all,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
