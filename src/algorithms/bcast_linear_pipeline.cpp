// Linear-pipeline broadcast along a path. Sanders et al. §13.1.4, Path::pipelinedBroadcast:
// while receiving packet i a rank forwards packet i-1 down the line (full duplex).
//   T(n, p, k) = (p + k - 2)(α + β⌈n/k⌉)   (p ≥ 2; exact on the one-port full-duplex model:
//   the first packet needs p-1 hops, each further packet one more message time. The text
//   counts p+k-1 steps, one more, an upper bound.)
//   k* = √((p-2)βn/α);  T₁(k*) = βn + pα + O(√(αβnp))
// Preconditions: none (any p, any root). Packets are cut on element boundaries (the first
// count mod k one element longer), k = args.packets.
//
//   root → r+1 → r+2 → … → r+p-1     time t: position v receives packet t-v+1 while it
//   packet 0 reaches position v at v message times; packet i at v + i.     sends packet t-v
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/linear_path.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
// Packet i of the message: whole elements only.
MutableBytes packet(MutableBytes buf, const EvenBlocks& packets, std::size_t elem_size,
                    std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
}  // namespace

Task<> bcast_linear_pipeline(Channel& ch, MutableBytes buf, std::size_t elem_size, std::size_t k,
                             int root) {
  const LinearPath path{ch.size(), root};
  const int prev = path.prev(ch.rank());
  const int next = path.next(ch.rank());
  const std::size_t count = elem_size == 0 ? 0 : buf.size() / elem_size;
  if (k == 0) k = 1;
  const EvenBlocks packets{count, k};

  std::vector<Transfer> recvs;
  if (prev >= 0) {
    recvs.reserve(k);
    for (std::size_t i = 0; i < k; ++i)
      recvs.push_back(
          ch.recv(prev, packet(buf, packets, elem_size, i), static_cast<std::uint32_t>(i)));
  }
  TransferSet sends;
  for (std::size_t i = 0; i < k; ++i) {
    if (prev >= 0) {
      Transfer& arrived = recvs[i];
      co_await arrived;
    }
    if (next >= 0)
      sends.add(ch.send(next, packet(buf, packets, elem_size, i), static_cast<std::uint32_t>(i)));
  }
  co_await sends;
}

namespace {
Task<> run_bcast_linear_pipeline(Channel& ch, const CollArgs& a) {
  return bcast_linear_pipeline(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.packets, a.root);
}
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0;
  const double k = q.k >= 1 ? q.k : 1;
  return (q.p + k - 2) * (q.m.alpha + q.m.beta * std::ceil(q.n / k));
}
double optimal_k(const CostQuery& q) {
  const double k = std::sqrt((q.p - 2) * q.m.beta * q.n / q.m.alpha);
  return k >= 1 ? k : 1;
}
}  // namespace

namespace {
// The root's first packet leaves its input; from then on the critical path is the chain
// forwarding what it received, p + k − 3 of its p + k − 2 packet steps (sim: exact).
double written_share(const CostQuery& q) {
  if (q.p < 3) return 0;
  return 1 - 1 / (q.p + std::max(q.k, 1.0) - 2);
}
}  // namespace

namespace {
// With k > 1 packets the p − 2 relays receive the next packet while they send one: (p − 2)/(p − 1)
// (approximate: the sim's share is 0.33–0.94 at p = 3 … 16, k = 2 … 32, growing with k).
double exchange_share(const CostQuery& q) {
  if (q.p < 3 || q.k <= 1) return 0;
  return (q.p - 2.0) / (q.p - 1.0);
}
}  // namespace

const Algorithm kBcastLinearPipeline{
    .name = "linear_pipeline",
    .coll = Collective::bcast,
    .reference = "Sanders et al. §13.1.4 (Path::pipelinedBroadcast)",
    .formula = "(p + k - 2)(α + β⌈n/k⌉), k* = √((p-2)βn/α)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = optimal_k,
    .run = run_bcast_linear_pipeline,
    .test = "bcast_reduce_test.BcastLinearPipelineExact",
    .written_share = written_share,
    .exchange_share = exchange_share,
};

}  // namespace fabcoll::algorithms
