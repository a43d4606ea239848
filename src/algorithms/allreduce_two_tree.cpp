// Two-tree all-reduce: pipelined reduce on the two trees, then the two-tree broadcast. Sanders,
// Speck, Träff, "Two-tree algorithms for full bandwidth broadcast, reduction and scan" (Parallel
// Computing 35, 2009); Sanders et al. §13.1.4 and the end of §13.2 (the two trees also serve
// reduction). The message is cut into k packets; packet i is reduced up the tree whose root
// edge has colour i mod 2 (half of the data up each tree) to rank 0, which then broadcasts the
// result with bcast_two_tree.
//   Trees: over an EVEN number m of positions (patterns/two_tree.hpp), where T2 is T1 mirrored,
//   so every subtree of either tree is an interval of positions and each node combines
//   (lower child) ⊗ own ⊗ (higher child): rank order is kept for non-commutative operators.
//   p even: m = p, position x = rank x; the tree roots send their results to rank 0.
//   p odd:  m = p - 1, position x = rank x + 1; rank 0 receives both roots' results and
//           computes own ⊗ received.
//   Schedule: the two-tree broadcast's colour schedule run backwards (every message of the
//   broadcast, reversed, in reverse step order): a rank handles its packets in decreasing
//   i + delay[tree], delay[t] being the step at which the broadcast would deliver a packet of
//   tree t to it, keeping one send in flight; so deep ranks start first and a rank's packets of
//   its two trees interleave (handling them in packet order couples the trees and costs O(h)
//   message times per packet: measured 7.7 at p = 64).
//   Bound (s = ⌈n/k⌉ bytes, h = ⌊log m⌋ the trees' height, h' = ⌊log(p-1)⌋ the broadcast's):
//   every rank sends each packet once and receives at most two packets of the tree it is
//   interior in (one per packet on average); rank 0 receives at most 2k (p even: its interior
//   tree's children plus the other root's results). Counting each packet at most two message
//   times plus its combine at the busiest port, and two steps per level to fill the pipeline
//   over the h + 1 levels to rank 0, the reduce phase takes at most
//   (2k + 2h + 2)(α + (β + γ)s) (a conservative bound of ours, not the paper's tight one; the
//   sim, p ≤ 64, needs about (k + 7)(α + (β+2γ)s) at large packets, up to (1.25k + 8) at
//   one-element packets, p even, where rank 0's 2k receives dominate); then the broadcast,
//   (k + 2h')(α + βs) (p = 3: 2k(α + βs)):
//   T(n, p, k) ≤ (2k + 2h + 2)(α + (β+γ)s) + (k + 2h')(α + βs).
//   Cost: at p ≤ 32 the sim's message steps (algorithms/sim_steps.hpp): R(p, k) for the
//   reduce phase and B(p, k) for the broadcast, each counted at unit message time,
//   T(n, p, k) = R(α + (β+γ)s) + B(α + βs); the reduce phase has no closed form we found
//   (R = 1.5k + 1 at p = 4, 1.25k + 4 at p = 8, k + 3 at p = 5, with irregular fills), and the
//   bound over-predicted by 53–96% at p = 4. Above p = 32 the bound. k* = the best integer near
//   √(bn/a), a and b the coefficients of k and n/k (see optimal_k).
// Preconditions: none (any p; rank order kept). Packets are cut on element boundaries.
//
//   positions 0..m-1:  T1 = in-order tree, T2 = its mirror (T1's interior = T2's leaves)
//   packet i ──up its tree──→ tree root ──→ rank 0 (⊗ its own data when p is odd)
//   rank 0 ──two-tree broadcast of all k packets──→ everyone
#include <algorithm>
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "algorithms/sim_steps.hpp"
#include "patterns/ring.hpp"
#include "patterns/two_tree.hpp"

namespace fabcoll::algorithms {

namespace {
MutableBytes two_tree_ar_packet(MutableBytes buf, const EvenBlocks& packets, std::size_t elem_size,
                                std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
}  // namespace

Task<> allreduce_two_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, const ReduceOp& op,
                          std::size_t k) {
  const int p = ch.size();
  const int me = ch.rank();
  if (p <= 1) co_return;
  const std::size_t n = buf.size();
  const std::size_t count = elem_size == 0 ? 0 : n / elem_size;
  if (k == 0) k = 1;
  const EvenBlocks packets{count, k};
  const int base = p % 2 == 0 ? 0 : 1;  // rank of position 0
  const int m = p - base;               // even
  const TwoTree trees{m};
  const int x = me - base;  // my position (-1: rank 0 when p is odd)

  // Packet i goes up the tree whose root edge has colour i mod 2 (as in bcast_two_tree).
  const std::vector<std::uint8_t> color = trees.edge_colors();
  std::array<int, 2> tree_of{};
  for (int t = 0; t < 2; ++t) tree_of[color[static_cast<std::size_t>(2 * trees.root(t) + t)]] = t;
  // Rank 0 receives the tree roots' results (packets of trees whose root is not rank 0 itself),
  // last packet first as the backward schedule delivers them. These receives are posted before
  // rank 0's own reduce work: with a rendezvous protocol (shm CMA at >= 32 KiB, the ofi RMA
  // read) a root's send of a result completes only once its receive is posted, and a root keeps
  // one send in flight, so for p even (rank 0 is in the trees) a root would otherwise stop
  // sending until rank 0 left its reduce loop, while rank 0 there waits for that root's later
  // packets: deadlock.
  MutableBytes res;
  std::vector<Transfer> roots;
  if (me == 0) {
    res = ch.scratch(n);
    roots.resize(k);
    for (std::size_t j = k; j-- > 0;) {
      const int r = trees.root(tree_of[j % 2]) + base;
      if (r != 0)
        roots[j] = ch.recv(r, two_tree_ar_packet(res, packets, elem_size, j),
                           static_cast<std::uint32_t>(j));
    }
  }
  // ---- reduce phase -------------------------------------------------------------------------
  if (x >= 0) {
    // Per tree: my parent rank (0 if I am that tree's root: results go to rank 0; -1 if I am
    // rank 0 and that tree's root), my lower and higher child ranks (-1: none), and the step
    // delay[t] at which the two-tree broadcast's colour schedule delivers a packet of tree t here.
    std::array<int, 2> parent{};
    std::array<int, 2> lower{-1, -1};
    std::array<int, 2> higher{-1, -1};
    std::array<std::size_t, 2> delay{};
    for (int t = 0; t < 2; ++t) {
      const int par = trees.parent(t, x);
      parent[t] = par >= 0 ? par + base : (me == 0 ? -1 : 0);
      for (const int c : trees.children(t, x)) {
        if (c < 0) continue;
        (c < x ? lower : higher)[t] = c + base;
      }
      std::vector<int> path;  // x and its ancestors up to the tree root
      for (int y = x; y >= 0; y = trees.parent(t, y)) path.push_back(y);
      for (std::size_t d = path.size() - 1; d > 0; --d) {
        const auto up = color[static_cast<std::size_t>(2 * path[d] + t)];
        const auto down = color[static_cast<std::size_t>(2 * path[d - 1] + t)];
        delay[t] += up != down ? 1 : 2;
      }
    }
    // The broadcast schedule run backwards: packet i leaves here in reduce step S - (i +
    // delay[tree]), so packets are handled in decreasing i + delay[tree]: deep ranks of a tree
    // start early, and a rank's packets of its two trees interleave as its edges' steps do.
    std::vector<std::size_t> order(k);
    for (std::size_t i = 0; i < k; ++i) order[i] = i;
    const auto key = [&](std::size_t i) { return i + delay[tree_of[i % 2]]; };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key(a) > key(b); });
    const MutableBytes lbuf = ch.scratch(n);
    const MutableBytes hbuf = ch.scratch(n);
    std::vector<Transfer> lows(k);
    std::vector<Transfer> highs(k);
    for (const std::size_t i : order) {
      const int t = tree_of[i % 2];
      const auto step = static_cast<std::uint32_t>(i);
      if (lower[t] >= 0)
        lows[i] = ch.recv(lower[t], two_tree_ar_packet(lbuf, packets, elem_size, i), step);
      if (higher[t] >= 0)
        highs[i] = ch.recv(higher[t], two_tree_ar_packet(hbuf, packets, elem_size, i), step);
    }
    Transfer up;  // one send in flight
    for (const std::size_t i : order) {
      const int t = tree_of[i % 2];
      const MutableBytes mine = two_tree_ar_packet(buf, packets, elem_size, i);
      if (lower[t] >= 0) {
        Transfer& got = lows[i];
        co_await got;
        Transfer work = ch.combine_left(op, two_tree_ar_packet(lbuf, packets, elem_size, i), mine);
        co_await work;
      }
      if (higher[t] >= 0) {
        Transfer& got = highs[i];
        co_await got;
        Transfer work = ch.combine_right(op, mine, two_tree_ar_packet(hbuf, packets, elem_size, i));
        co_await work;
      }
      if (parent[t] >= 0) {
        co_await up;
        up = ch.send(parent[t], mine, static_cast<std::uint32_t>(i));
      }
    }
    co_await up;
  }
  if (me == 0) {
    for (std::size_t j = k; j-- > 0;) {
      const int r = trees.root(tree_of[j % 2]) + base;
      if (r == 0) continue;
      Transfer& got = roots[j];
      co_await got;
      const MutableBytes mine = two_tree_ar_packet(buf, packets, elem_size, j);
      if (base == 1) {
        Transfer work = ch.combine_right(op, mine, two_tree_ar_packet(res, packets, elem_size, j));
        co_await work;
      } else {
        ch.copy(mine, two_tree_ar_packet(res, packets, elem_size, j));
      }
    }
  }
  // ---- broadcast phase ----------------------------------------------------------------------
  co_await bcast_two_tree(ch, buf, elem_size, k, 0);
}

namespace {
Task<> run_allreduce_two_tree(Channel& ch, const CollArgs& a) {
  return allreduce_two_tree(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.op, a.packets);
}
double cost_k(const CostQuery& q, double k) {
  if (q.p <= 1) return 0;
  const double s = std::ceil(q.n / k);
  // p = 2: the reduce and the broadcast each cross the one edge with k packets, the combine of
  // all but the last packet overlapped with them; when combining is the bottleneck each rank,
  // the root of one of the two trees, combines half the packets (k ≥ 2). An empirical fit,
  // exact on the sim for γ/β = 1/2 … 16 and k = 1 … 16 (the bound is 2–4 times this).
  if (q.p == 2) {
    const double tau = q.m.alpha + q.m.beta * s;
    const double send_bound = 2 * k * tau + q.m.gamma * s;
    return k < 2 ? send_bound : std::max(send_bound, q.m.gamma * q.n / 2 + (1.5 * k + 1) * tau);
  }
  const double tau = q.m.alpha + q.m.beta * s;
  // p ≤ kSimStepsMaxP: the sim's message steps, the broadcast phase's counted apart (its
  // messages carry no combine). The bound counts rank 0's up to 2k receives and two steps per
  // level; the sim needs 1–1.5 per packet and a fill of 1–10 steps (1.2–2 times less: the
  // bound over-predicted by 53–96% at p = 4). γ is charged once per reduce step, as in the
  // bound: within 11% of the sim at γ = 0.12β (TwoTreeAllreduce.CostIsTheSimsSteps).
  if (q.p <= kSimStepsMaxP) {
    const double all = sim_steps(kAllreduceTwoTree, q.p, k);
    const double bcast = sim_steps(kBcastTwoTree, q.p, k);
    return (all - bcast) * (q.m.alpha + (q.m.beta + q.m.gamma) * s) + bcast * tau;
  }
  const int m = q.p % 2 == 0 ? q.p : q.p - 1;
  const int h = TwoTree{m}.height();
  const double reduce = (2 * k + 2 * h + 2) * (q.m.alpha + (q.m.beta + q.m.gamma) * s);
  const double bcast = (k + 2 * TwoTree{q.p - 1}.height()) * tau;
  return reduce + bcast;
}
double cost(const CostQuery& q) { return cost_k(q, q.k >= 1 ? q.k : 1); }
double optimal_k(const CostQuery& q) {
  if (q.p <= 1 || q.n <= 1) return 1;
  // p = 2, sending the bottleneck: 2kα + 2βn + γn/k is least at k = √(γn/2α).
  if (q.p == 2)
    return std::max(1.0, q.m.alpha > 0 ? std::sqrt(q.m.gamma * q.n / (2 * q.m.alpha)) : 1.0);
  // With s = n/k the bound is a·k + b·n/k + const: a = 3α, b = (2h+2)(β+γ) + 2h'β, minimised
  // at k0 = √(bn/a); ⌈n/k⌉ makes nearby integers differ slightly, so the best integer in
  // [k0/2, 2k0 + 2] (at most 4096 of them around k0) is taken.
  // Costed from the sim's steps (p ≤ kSimStepsMaxP): the same with the steps' slope and
  // intercept in k (runs at 16 and 32 packets) for the reduce phase and the broadcast.
  double a = 0;
  double b = 0;
  if (q.p <= kSimStepsMaxP) {
    const auto line = [&](const Algorithm& alg, double& slope, double& at0) {
      const double s16 = sim_steps(alg, q.p, 16);
      slope = (sim_steps(alg, q.p, 32) - s16) / 16;
      at0 = s16 - 16 * slope;
    };
    double all_slope = 0, all_0 = 0, bcast_slope = 0, bcast_0 = 0;
    line(kAllreduceTwoTree, all_slope, all_0);
    line(kBcastTwoTree, bcast_slope, bcast_0);
    a = all_slope * q.m.alpha;
    b = (all_0 - bcast_0) * (q.m.beta + q.m.gamma) + bcast_0 * q.m.beta;
  } else {
    const int m = q.p % 2 == 0 ? q.p : q.p - 1;
    const double h = TwoTree{m}.height();
    a = 3 * q.m.alpha;
    b = (2 * h + 2) * (q.m.beta + q.m.gamma) + 2 * TwoTree{q.p - 1}.height() * q.m.beta;
  }
  const double k0 = a > 0 ? std::sqrt(std::max(0.0, b) * q.n / a) : q.n;
  return best_k_near(q, k0, cost_k);
}
}  // namespace

namespace {
// Approximate: up the trees every inner node sends what it combined, down them what it
// received; only the leaves' first packets are input. The sim's share lies between 0.69 and 0.99
// for p = 3 … 16 and k = 1 … 32 (p = 2: 0.5 at one packet, else 0.75): 0.8.
double written_share(const CostQuery& q) {
  if (q.p < 2) return 0;
  if (q.p == 2) return q.k <= 1 ? 0.5 : 0.75;
  return 0.8;
}
}  // namespace

namespace {
// Approximate, as the written share: with k > 1 packets the inner nodes overlap the sweeps.
// The sim's share: p = 2: 0.25; p = 3: 0.14–0.32; p = 4 … 16: 0.2–0.93 growing with k
// (k = 2 … 32); 0 at one packet.
double exchange_share(const CostQuery& q) {
  if (q.p < 2 || q.k <= 1) return 0;
  if (q.p == 2) return 0.25;
  if (q.p == 3) return 0.3 * (1 - 1 / q.k);
  return 0.8 * std::max(0.0, 1 - 1.8 / q.k);
}
}  // namespace

const Algorithm kAllreduceTwoTree{
    .name = "two_tree",
    .coll = Collective::allreduce,
    .reference = "Sanders, Speck, Träff 2009; Sanders et al. §13.1.4, §13.2",
    .formula =
        "p ≤ 32: R(α + (β+γ)⌈n/k⌉) + B(α + β⌈n/k⌉), R and B the sim's message steps of the "
        "reduce and broadcast phases (unit message time); p > 32: the bound (2k + 2h + 2)(α + "
        "(β+γ)⌈n/k⌉) + (k + 2h')(α + β⌈n/k⌉), h = ⌊log m⌋, m = p rounded down to even, h' = "
        "⌊log(p-1)⌋; k* ≈ √(bn/a), a, b the coefficients of k and n/k; p = 2: "
        "max(2kτ + γs, γn/2 + (1.5k+1)τ) (k ≥ 2), τ = α + βs, s = ⌈n/k⌉, k* = √(γn/2α)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = optimal_k,
    .run = run_allreduce_two_tree,
    .test = "two_tree_allreduce_test.CostIsTheSimsSteps",
    .written_share = written_share,
    .exchange_share = exchange_share,
    // Its broadcast's receivers idle through the reduce: K again (Algorithm::calls). p = 4
    // sockets on 2 cores, with reduce + bcast costed as its two calls (K twice), a --quick
    // launch chose it at 512 B, predicted 63 µs, measured 93 (recursive doubling 64/63); the
    // forty-fifth session's launches validated it at a median 15.5% under its time at 1-30 KiB
    // (18 points, -23.7% to +5.4%).
    .calls = 2,
};

}  // namespace fabcoll::algorithms
