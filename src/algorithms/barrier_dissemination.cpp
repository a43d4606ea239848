// Dissemination barrier (Hensgen, Finkel and Manber). Vadhiyar, "Collective Communication
// Implementations" (002_…), Barrier Algorithms:
//   "In round k, i signals (i + 2^k) mod P"; at most ⌈log p⌉ rounds on the critical path.
//   T(p) = ⌈log p⌉ α  (zero-byte messages)
// Preconditions: none (any p). After round k rank i has heard, directly or indirectly, from the
// 2^(k+1) - 1 ranks i-1 … i-2^(k+1)+1 below it (mod p), so after ⌈log p⌉ rounds from everyone.
//
//   round 0: 0→1 1→2 2→3 … (p-1)→0
//   round 1: 0→2 1→3 2→4 … (p-1)→1
//   round 2: 0→4 1→5 …            (no pairing: every rank sends one and receives one signal)
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"
#include "patterns/rank_mod.hpp"

namespace fabcoll::algorithms {

Task<> barrier_dissemination(Channel& ch) {
  const int p = ch.size();
  const int me = ch.rank();
  const int rounds = BinomialTree::ceil_log2(p);
  for (int k = 0; k < rounds; ++k) {
    const int dist = 1 << k;
    const auto step = static_cast<std::uint32_t>(k);
    Transfer out = ch.send(rank_mod(me + dist, p), ConstBytes{}, step);
    Transfer in = ch.recv(rank_mod(me - dist, p), MutableBytes{}, step);
    co_await in;  // round k+1 may only signal once round k's signal has arrived
    co_await out;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& /*args*/) { return barrier_dissemination(ch); }
double cost(const CostQuery& q) { return BinomialTree::ceil_log2(q.p) * q.m.alpha; }
}  // namespace

const Algorithm kBarrierDissemination{
    .name = "dissemination",
    .coll = Collective::barrier,
    .reference =
        "Vadhiyar, Collective Communication Implementations (dissemination barrier, "
        "Hensgen, Finkel and Manber); Sanders et al. Cor. 13.8",
    .formula = "⌈log p⌉α",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.BarrierDisseminationTakesCeilLogPRounds",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
