// Linear (central) barrier: every rank reports to rank 0, which then releases every rank: the
// naive gather (Sanders et al. §13.5.1) and the naive broadcast (§13.1) of zero bytes, the
// message-passing form of the central-counter barrier of §13.4.3 (Listing 13.1).
//   T(p) = 2(p − 1)α on the texts' one-port model (rank 0's port serialises p − 1 arrivals,
//          then p − 1 releases); with the per-message overheads apart from α, the
//          receiver's o_r for the arrivals and the sender's o for the releases
//          (CostModel::receive_overhead, ::overhead): 2α + (p − 2)(o_r + o).
// Only two message hops on the critical path whatever p, and no rank waits for a rank other
// than 0: when ranks time-share cores each hop can cost a scheduling delay, and this barrier
// pays two where the dissemination barrier pays ⌈log p⌉.
// Preconditions: none.
//
//   up:    1→0 2→0 3→0 …     (step 0, all at once)
//   down:  0→1 0→2 0→3 …     (step 1, once rank 0 has every arrival)
#include "algorithms/algorithms.hpp"

namespace fabcoll::algorithms {

Task<> barrier_linear(Channel& ch) {
  const int p = ch.size();
  if (ch.rank() != 0) {
    Transfer up = ch.send(0, ConstBytes{}, 0);
    Transfer down = ch.recv(0, MutableBytes{}, 1);
    co_await up;
    co_await down;
    co_return;
  }
  TransferSet arrivals;
  for (int r = 1; r < p; ++r) arrivals.add(ch.recv(r, MutableBytes{}, 0));
  co_await arrivals;
  TransferSet releases;
  for (int r = 1; r < p; ++r) releases.add(ch.send(r, ConstBytes{}, 1));
  co_await releases;
}

namespace {
Task<> run(Channel& ch, const CollArgs& /*args*/) { return barrier_linear(ch); }
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0.0;
  return 2 * q.m.alpha + (q.p - 2) * (q.m.recv_overhead() + q.m.send_overhead());
}
}  // namespace

const Algorithm kBarrierLinear{
    .name = "linear",
    .coll = Collective::barrier,
    .reference =
        "Sanders et al. §13.5.1 naive gather + §13.1 naive broadcast of zero bytes (the "
        "central barrier of §13.4.3, Listing 13.1)",
    .formula = "2α + (p − 2)(o_r + o); o_r = o = α: 2(p − 1)α",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.BarrierLinearMatchesFormula",
};

}  // namespace fabcoll::algorithms
