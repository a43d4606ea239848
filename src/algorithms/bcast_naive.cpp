// Naive (flat-tree) broadcast. Sanders et al. §13.1: "A naive implementation uses a for-loop
// and p-1 send operations. This strategy is purely sequential and needs time at least
// α(p-1)":
//   T(n, p) = (p - 1)(α + βn)      (the text's model: a send occupies the sender for α + βn)
// With the sender's per-message overhead o apart from the latency α (CostModel::overhead,
// LogP's o) and its time per byte G (CostModel::gap, LogGP's G; o = α and G = β give the
// text's formula back), the last receiver has its message after
//   T(n, p) = α + βn + (p - 2)(o + Gn)
// and, for messages the receivers pull themselves (shm single-copy reads, n >= pull_bytes),
//   T(n, p) = α + βn(1 + φ(p - 2)) + (p - 2)o
// (the p - 1 copies run in the receivers, at once; φ, CostModel::pull_fanout, is what each
// further reader of the root's buffer adds, measured: 0 when they run side by side). With ranks
// sharing CPUs (CostModel::placement) the copies run at once only on different CPUs: the c
// receivers of the CPU that holds the most copy one after another,
//   T(n, p) = α + βn(c + φ(p - 2)) + (p - 2)o
// No rank forwards anything: no receiver waits for another receiver to be scheduled,
// which is what makes it the fastest small broadcast when ranks time-share cores.
// Preconditions: none (any p, any root).
//
//   0 → 1, 0 → 2, 0 → 3, …   all posted at once by the root, from root + 1 on
#include <algorithm>

#include "algorithms/algorithms.hpp"
#include "algorithms/placement.hpp"
#include "patterns/rank_mod.hpp"

namespace fabcoll::algorithms {

Task<> bcast_naive(Channel& ch, MutableBytes buf, int root) {
  const int p = ch.size();
  const int me = ch.rank();
  if (me != root) {
    Transfer in = ch.recv(root, buf);
    co_await in;
    co_return;
  }
  TransferSet sends;
  for (int i = 1; i < p; ++i) sends.add(ch.send(rank_mod(root + i, p), buf));
  co_await sends;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  return bcast_naive(ch, bytes_of(a.recvbuf, a.bytes()), a.root);
}
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0.0;
  const double per_byte = q.m.beta * q.n;
  // Receiver-pulled messages (CostModel::pull_bytes): the p - 1 receivers copy at once and
  // the root pays o per receiver. Measured, shm on 2 cores, 1 MiB: p = 4 130 us and p = 8
  // 143 us (mean over ranks), where the binomial tree took 150 and 303 us. Each receiver
  // beyond the first adds φ·βn (CostModel::pull_fanout): on 16 cores the pulls of one buffer
  // did not run side by side (fabcoll-calibrate measures φ).
  // With ranks sharing CPUs, the receivers of one CPU pull one after another: p = 4 on 2
  // cores (cyclic: two receivers on one core), 384 KiB in the fit's training, the naive
  // broadcast took 84.4 and 92.8 us, where one pull's time fitted −26% and −39% under and two
  // pulls' +13% and −2% (the fit's sum of squared relative errors 1.30 → 1.31, 1.09 → 0.81);
  // 1 MiB, validated: 297.5 and 325.0 us, 152.7 and 136.0 predicted with one pull.
  if (q.m.pull_bytes > 0 && q.n >= q.m.pull_bytes) {
    const Placement* placed = q.m.placement;
    const double serial =
        placed != nullptr && placed->size() == q.p ? std::max(1, placed->most_on_one_cpu(0)) : 1;
    return q.m.alpha + per_byte * (serial + q.m.pull_fanout * (q.p - 2)) +
           (q.p - 2) * q.m.send_overhead();
  }
  // Written by the sender (shm rings, eager fabric sends): the root is busy o + Gn per send,
  // the receivers copy out on their own cores.
  return q.m.alpha + per_byte + (q.p - 2) * (q.m.send_overhead() + q.m.send_gap() * q.n);
}
double message_bytes(const CostQuery& q) { return q.n; }  // every send is the whole buffer
}  // namespace

const Algorithm kBcastNaive{
    .name = "naive",
    .coll = Collective::bcast,
    .reference = "Sanders et al. §13.1 (naive broadcast: a for-loop of p − 1 sends)",
    .formula =
        "α + βn + (p − 2)(o + Gn); o = α, G = β: (p − 1)(α + βn); receiver-pulled n: "
        "α + βn(c + φ(p − 2)) + (p − 2)o, φ the measured pull fan-out, c the most receivers "
        "on one CPU (1 with a CPU each)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "bcast_reduce_test.BcastNaiveMatchesSection13_1",
    .message_bytes = message_bytes,
};

}  // namespace fabcoll::algorithms
