// Direct all-to-all with per-pair counts (alltoallv). Sanders et al. §13.6.1 (direct delivery,
// the full-duplex cycles i → i+k); MPICH's order (002_…: dest = i+k, src = i-k):
//   uniform blocks of n bytes: T = (p - 1)(α + βn); in general each step k lasts as long as its
//   largest message (plus waiting): T ≤ Σ_k (α + β·max_i |m_{i,i+k}|)
// Preconditions: none (any p, any counts including zeros). A pair with a zero count exchanges
// no message at all (both ends know the count: scounts at the sender, counts at the receiver).
//
//   step k: i → i+k, i ← i-k      every port carries at most one message per step
//   counts/displacements in elements of elem_size bytes
//   m_ii is a local copy
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

Task<> alltoallv_direct(Channel& ch, const void* sendbuf, void* recvbuf, std::size_t elem_size,
                        const std::size_t* scounts, const std::size_t* sdispls,
                        const std::size_t* rcounts, const std::size_t* rdispls) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  const auto* sbase = static_cast<const std::byte*>(sendbuf);
  auto* rbase = static_cast<std::byte*>(recvbuf);
  auto out = [&](int j) {
    const auto u = static_cast<std::size_t>(j);
    return ConstBytes(sbase + sdispls[u] * elem_size, scounts[u] * elem_size);
  };
  auto in = [&](int j) {
    const auto u = static_cast<std::size_t>(j);
    return MutableBytes(rbase + rdispls[u] * elem_size, rcounts[u] * elem_size);
  };
  if (!in(i).empty()) ch.copy(in(i), out(i));
  for (int k = 1; k < p; ++k) {
    const int to = ring.mod(i + k);
    const int from = ring.mod(i - k);
    TransferSet step;
    if (!out(to).empty()) step.add(ch.send(to, out(to)));
    if (!in(from).empty()) step.add(ch.recv(from, in(from)));
    co_await step;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return alltoallv_direct(ch, a.sendbuf, a.recvbuf, a.elem_size, a.scounts, a.sdispls, a.counts,
                          a.displs);
}
double cost(const CostQuery& q) { return (q.p - 1) * (q.m.alpha + q.m.beta * q.n); }
}  // namespace

const Algorithm kAlltoallvDirect{
    .name = "direct",
    .coll = Collective::alltoallv,
    .reference = "Sanders et al. §13.6.1 (direct delivery); MPICH order (002_…)",
    .formula = "(p - 1)(α + βn) for uniform blocks of n bytes; Σ_k (α + β max_i |m_i,i+k|)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.AlltoallvDirectMatchesSection13_6_1",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
