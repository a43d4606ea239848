// Linear (naive) gather: every rank sends its block straight to the root. Sanders et al.
// §13.5.1: "all PEs send their message directly to PE 0. This takes communication time
//   T(n, p) = (p - 1)(α + nβ)"
// (the root's one receive port serialises the p - 1 messages).
// Where the transport clears fan-ins (Transport::clear_fan_in_from: the sockets provider from
// 64 KiB) the root sends each sender an empty go-ahead before taking its block, one at a time;
// the formula does not charge the go-aheads.
// Preconditions: none (any p, any root).
//
//   1 → 0
//   2 → 0      all posted at once; the root receives each block in place
//   3 → 0
#include "algorithms/algorithms.hpp"

namespace fabcoll::algorithms {

Task<> gather_linear(Channel& ch, ConstBytes block, MutableBytes all, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const std::size_t n = block.size();
  // Where the transport stalls on several large messages arriving together, the root clears
  // each sender in turn (Channel::clears_fan_in) and takes the blocks one at a time.
  if (me != root) {
    if (ch.clears_fan_in(root, n)) {
      Transfer go = ch.fan_in_wait(root);
      co_await go;
    }
    Transfer out = ch.send(root, block);
    co_await out;
    co_return;
  }
  ch.copy(all.subspan(static_cast<std::size_t>(me) * n, n), block);  // no-op when in place
  TransferSet arrivals;
  for (int i = 1; i < p; ++i) {  // from root + 1 on, so every rank's message is first somewhere
    const int r = (root + i) % p;
    const MutableBytes into = all.subspan(static_cast<std::size_t>(r) * n, n);
    if (ch.clears_fan_in(r, n)) {
      Transfer go = ch.fan_in_go(r);
      co_await go;
      Transfer one = ch.recv(r, into);
      co_await one;
    } else {
      arrivals.add(ch.recv(r, into));
    }
  }
  co_await arrivals;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  const bool at_root = ch.rank() == a.root;
  const MutableBytes all =
      at_root ? bytes_of(a.recvbuf, n * static_cast<std::size_t>(ch.size())) : MutableBytes{};
  return gather_linear(ch, bytes_of(a.sendbuf, n), all, a.root);
}
double cost(const CostQuery& q) { return (q.p - 1) * (q.m.alpha + q.n * q.m.beta); }
}  // namespace

const Algorithm kGatherLinear{
    .name = "linear",
    .coll = Collective::gather,
    .reference = "Sanders et al. §13.5.1 (naive gather)",
    .formula = "(p − 1)(α + nβ)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.GatherLinearMatchesNaiveBound",
};

}  // namespace fabcoll::algorithms
