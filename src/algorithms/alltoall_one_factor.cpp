// 1-factor ("telephone") all-to-all with direct delivery. Sanders et al. §13.6.1 (Fig. 13.13):
//   T(n, p) = (p - isEven(p)) (α + βn) + isEven(p)·δn    n = bytes per block (one message m_ij);
//   δn: the local copy of m_ii (the model's copy term; odd p sends it to itself instead)
// Preconditions: none (any p). Each round pairs the ranks (a 1-factor of the complete graph);
// for odd p one rank per round talks to itself (a self message carrying m_ii), for even p that
// rank talks to p-1 instead.
//
//   p' = p - isEven(p); round r: k = 2r mod p', partner j = (k - i) mod p'
//   even p: the idle rank i = r pairs with p-1
//   p = 6, partners of rank 3 over the 5 rounds: 2, 4, 1, 5, 0
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
/// Rank i's partner in round r (i itself when it sits the round out, odd p only).
int one_factor_partner(int p, int i, int r) {
  const bool even = p % 2 == 0;
  const Ring cycle{even ? p - 1 : p};  // the p' ranks seated around the table
  if (even && i == p - 1) return r;
  if (even && i == r) return p - 1;
  return cycle.mod(cycle.mod(2 * r) - i);
}
}  // namespace

Task<> alltoall_one_factor(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const int p = ch.size();
  const int i = ch.rank();
  const int rounds = p - (p % 2 == 0 ? 1 : 0);
  auto out = [&](int j) { return send.subspan(static_cast<std::size_t>(j) * block, block); };
  auto in = [&](int j) { return recv.subspan(static_cast<std::size_t>(j) * block, block); };
  // Even p: m_ii never leaves. Odd p: as in the text, the idle PE of round r "communicates
  // superfluously with itself", carrying m_ii. This keeps the rounds in step: a PE that skipped
  // its idle round would post its next send a round early and could take its next partner's
  // receive port ahead of that partner's current message, costing everyone a round.
  if (p % 2 == 0) ch.copy(in(i), out(i));
  for (int r = 0; r < rounds; ++r) {
    const int j = one_factor_partner(p, i, r);
    Transfer t_out = ch.send(j, out(j));
    Transfer t_in = ch.recv(j, in(j));
    co_await t_out;
    co_await t_in;
  }
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_one_factor(ch, bytes_of(a.sendbuf, np * a.bytes()),
                             bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  const int rounds = q.p - (q.p % 2 == 0 ? 1 : 0);
  // Even p: m_ii is copied locally (δn); odd p: it travels in the idle round's self message.
  return rounds * (q.m.alpha + q.m.beta * q.n) + (q.p % 2 == 0 ? q.m.copy * q.n : 0.0);
}
}  // namespace

const Algorithm kAlltoallOneFactor{
    .name = "one_factor",
    .coll = Collective::alltoall,
    .reference = "Sanders et al. §13.6.1 (1-factor algorithm, Fig. 13.13)",
    .formula = "(p - isEven(p))(α + βn) + isEven(p)·δn, n = bytes per block",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.OneFactorMatchesSection13_6_1",
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
