// Linear (naive) scatter: the root sends every rank its block directly; the dual of the naive
// gather of Sanders et al. §13.5.1/§13.5.2:
//   T(n, p) = (p - 1)(α + nβ)     (the root's one send port serialises the p - 1 messages)
// Preconditions: none (any p, any root).
//
//   0 → 1
//   0 → 2      all posted at once, each from its place in the root's buffer
//   0 → 3
#include "algorithms/algorithms.hpp"

namespace fabcoll::algorithms {

Task<> scatter_linear(Channel& ch, ConstBytes all, MutableBytes block, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  const std::size_t n = block.size();
  if (me != root) {
    Transfer in = ch.recv(root, block);
    co_await in;
    co_return;
  }
  TransferSet sends;
  for (int i = 1; i < p; ++i) {
    const int r = (root + i) % p;
    sends.add(ch.send(r, all.subspan(static_cast<std::size_t>(r) * n, n)));
  }
  ch.copy(block, all.subspan(static_cast<std::size_t>(me) * n, n));  // no-op when in place
  co_await sends;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const std::size_t n = a.bytes();
  const bool at_root = ch.rank() == a.root;
  const ConstBytes all =
      at_root ? bytes_of(a.sendbuf, n * static_cast<std::size_t>(ch.size())) : ConstBytes{};
  return scatter_linear(ch, all, bytes_of(a.recvbuf, n), a.root);
}
double cost(const CostQuery& q) { return (q.p - 1) * (q.m.alpha + q.n * q.m.beta); }
}  // namespace

const Algorithm kScatterLinear{
    .name = "linear",
    .coll = Collective::scatter,
    .reference = "Sanders et al. §13.5.1–13.5.2 (naive gather and its dual)",
    .formula = "(p − 1)(α + nβ)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.ScatterLinearMatchesNaiveBound",
};

}  // namespace fabcoll::algorithms
