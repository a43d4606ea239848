// Circular (cyclic-shift) all-to-all with direct delivery. Sanders et al. §13.6.1 (the
// full-duplex cycles, Exercise 13.10); MPICH's order (002_…: dest = i+k, src = i-k):
//   T(n, p) = (p - 1)(α + βn) + δn            n = bytes per block, δn: the local copy of m_ii
// Preconditions: none (any p). In step k every rank sends to i+k and receives from i-k, so
// every send port and every receive port carries exactly one message per step.
//
//   step 1: 0→1→2→…→p-1→0
//   step 2: 0→2→4→…        (cycles of the permutation i ↦ i+2)
//   step k: i → i+k, i ← i-k
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> alltoall_circular(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  auto out = [&](int j) { return send.subspan(static_cast<std::size_t>(j) * block, block); };
  auto in = [&](int j) { return recv.subspan(static_cast<std::size_t>(j) * block, block); };
  ch.copy(in(i), out(i));
  for (int k = 1; k < p; ++k) {
    const int to = ring.mod(i + k);
    const int from = ring.mod(i - k);
    Transfer t_out = ch.send(to, out(to));
    Transfer t_in = ch.recv(from, in(from));
    co_await t_out;
    co_await t_in;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_circular(ch, bytes_of(a.sendbuf, np * a.bytes()),
                           bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  return (q.p - 1) * (q.m.alpha + q.m.beta * q.n) + q.m.copy * q.n;  // δn: m_ii
}
}  // namespace

const Algorithm kAlltoallCircular{
    .name = "circular",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. §13.6.1 (cycles, Exercise 13.10); MPICH order (002_…)",
    .formula = "(p - 1)(α + βn) + δn, n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.CircularMatchesSection13_6_1",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
