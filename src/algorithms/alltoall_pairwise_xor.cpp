// Pairwise-exchange all-to-all for p = 2^d. Sanders et al. §13.6.1 (first paragraph); MPICH's
// long-message all-to-all (002_…: "in step k each process i exchanges data with i xor k"):
//   T(n, p) = (p - 1)(α + βn) + δn            n = bytes per block, δn: the local copy of m_ii
// Preconditions: p a power of two (i xor k must stay below p). Every pair meets exactly once,
// in step i xor j, and exchanges its two messages (the telephone model).
//
//   p = 4:  step 1: 0↔1 2↔3
//           step 2: 0↔2 1↔3
//           step 3: 0↔3 1↔2
#include "algorithms/algorithms.hpp"

namespace fabcoll::algorithms {

Task<> alltoall_pairwise_xor(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const int p = ch.size();
  const int i = ch.rank();
  auto out = [&](int j) { return send.subspan(static_cast<std::size_t>(j) * block, block); };
  auto in = [&](int j) { return recv.subspan(static_cast<std::size_t>(j) * block, block); };
  ch.copy(in(i), out(i));
  for (int k = 1; k < p; ++k) {
    const int j = i ^ k;  // (i xor k) xor k = i: both ends agree on the pairing
    Transfer t_out = ch.send(j, out(j));
    Transfer t_in = ch.recv(j, in(j));
    co_await t_out;
    co_await t_in;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_pairwise_xor(ch, bytes_of(a.sendbuf, np * a.bytes()),
                               bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  return (q.p - 1) * (q.m.alpha + q.m.beta * q.n) + q.m.copy * q.n;  // δn: m_ii
}
}  // namespace

const Algorithm kAlltoallPairwiseXor{
    .name = "pairwise_xor",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. §13.6.1 (i xor k); MPICH pairwise exchange (002_…)",
    .formula = "(p - 1)(α + βn) + δn, n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = true,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.PairwiseXorMatchesSection13_6_1",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
