// All-reduce as a tree reduce to rank 0 followed by a tree broadcast. van de Geijn, LAPACK
// Working Note 29, §3.1 Version 1 (Fig. 1), over the binomial (minimum spanning) tree of
// Sanders et al. §13.1.1/§13.2 (reduce_binomial.cpp, bcast_binomial.cpp).
//   p = 2^d:  T = 2d(α + βn) + dγn   (LAWN 29: "2d(α + nβ) + dnγ"; exact)
//   other p:  T ≤ ⌈log p⌉(2α + 2βn + γn)
// Preconditions: none. Non-commutative operators keep rank order (the reduce is rooted at rank
// 0, where the binomial tree's subtrees are contiguous rank ranges).
//
//   reduce:  1→0 3→2 | 2→0 | …     partial results flow up the tree, combined in rank order
//   bcast:   0→4 | 0→2 4→6 | …     the result flows back down the same tree
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> allreduce_reduce_bcast(Channel& ch, MutableBytes buf, const ReduceOp& op, ConstBytes input) {
  // The reduce reads the input (buf itself when in place: reduce_binomial allows out to alias
  // in at the root, and elsewhere only reads it, its sends complete when it returns) and leaves
  // the result in buf at rank 0; the broadcast fills every other buf.
  if (input.empty()) input = buf;
  Task<> reduce = reduce_binomial(ch, input, buf, op, 0);
  co_await reduce;
  Task<> bcast = bcast_binomial(ch, buf, 0);
  co_await bcast;
}

namespace {
Task<> run_reduce_bcast(Channel& ch, const CollArgs& a) {
  return allreduce_reduce_bcast(ch, bytes_of(a.recvbuf, a.bytes()), a.op,
                                bytes_of(a.sendbuf, a.bytes()));
}
double cost_reduce_bcast(const CostQuery& q) {
  const auto& m = q.m;
  return BinomialTree::ceil_log2(q.p) * (2 * (m.alpha + m.beta * q.n) + m.gamma * q.n);
}
}  // namespace

namespace {
// The binomial reduce's written steps (binomial_reduce_written_share), then a broadcast of the
// combined result, every step written.
double written_share(const CostQuery& q) {
  const int d = BinomialTree::ceil_log2(q.p);
  if (d == 0) return 0;
  return (binomial_reduce_written_share(q.p) * d + d) / (2.0 * d);
}
}  // namespace

// Costed as the two calls it makes (Algorithm::parts). p = 4 sockets on 2 cores, nineteen
// --quick launches of the forty-fourth and forty-fifth sessions: costed as one call (one K, W
// on every round) its training points came out 7-18% under their time at every size (medians
// 0.82-0.94 of it, 256 B to 384 KiB), where the binomial reduce's and broadcast's predictions
// added up came to 0.89-1.15 of it; its time was that of the two calls timed apart (0.97-1.10).
// Chosen over recursive doubling at 2-25 KiB, it was 10-18% slower in five of those launches.
// Its broadcast sends the result its root combined: every byte of it written (written_share
// above counts it so), where the binomial broadcast's own share counts its root's sends as the
// caller's input (0.5 at p = 4, the whole then 0.5 against the sim's 0.75). Over the fabric ω
// is 1 and it changes nothing; inside a node, from shm's single-copy threshold, it does.
namespace {
double result_written(const CostQuery& q) { return q.p > 1 ? 1.0 : 0.0; }
Algorithm broadcast_of_result() {
  Algorithm a = kBcastBinomial;  // constant-initialized (a constant expression): no order issue
  a.written_share = result_written;
  return a;
}
const Algorithm kBcastOfResult = broadcast_of_result();
}  // namespace
const Algorithm* const kReduceBcastCalls[] = {&kReduceBinomial, &kBcastOfResult};

const Algorithm kAllreduceReduceBcast{
    .name = "reduce_bcast",
    .coll = Collective::allreduce,
    .reference = "LAWN 29 §3.1 Version 1; Sanders et al. §13.1.1, §13.2 (binomial trees)",
    .formula = "⌈log p⌉(2α + 2βn + γn)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost_reduce_bcast,
    .optimal_k = nullptr,
    .run = run_reduce_bcast,
    .test = "allreduce_scan_test.AllreduceReduceBcastMatchesLawn29Version1",
    .separate_input = true,
    .written_share = written_share,
    .parts = kReduceBcastCalls,
};

}  // namespace fabcoll::algorithms
