// Post-all all-to-all (direct delivery, every message in flight at once). MPICH's
// medium-message all-to-all (002_…: "Post all irecv's and isends (for medium size messages.
// 256 bytes – 32 KB)"); Sanders et al. §13.6.1 (direct delivery) in the order of the circular
// algorithm (send to i+k, receive from i-k):
//   messages its sender writes (n < pull_bytes, or pull_bytes = 0):
//     T(n, p) = α + βn + (p - 2)(o + βn) + δn
//   messages their receivers read (n >= pull_bytes, shm single copy):
//     T(n, p) = α + (p - 2)o + (p - 1)βn + δn
// (o: the sender's time per message, CostModel::overhead; o = α gives the text's
// (p - 1)(α + βn) back; δn: the local copy of m_ii. Not LogGP's G in place of β, as the naive
// broadcast has: every rank here also copies p - 1 incoming messages out on its own core, so
// each message costs its core βn in all.)
// Preconditions: none (any p).
//
// Every receive is posted first, so a message never waits for its receiver to reach its round:
// when ranks time-share cores, a rank that runs drains whatever has arrived from anyone. Sends
// that the sender writes itself go one after another (each completes once written: the next
// one follows at once); sends that the receivers read are all posted at once, and the p - 1
// reads then proceed in the receivers side by side. The one-port model (the sim) books a port
// per message in posting order, so there the sends of a writing sender keep the circular
// algorithm's rounds: the same (p - 1)(α + βn) at o = α, exactly.
//
//   post: recv from i-1, i-2, …, i-(p-1)
//   then: send to i+1, i+2, …, i+(p-1)   (awaited one by one, or all at once when pulled)
#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"

namespace fabcoll::algorithms {

namespace {
bool pulled(const CostModel& m, double n) { return m.pull_bytes > 0 && n >= m.pull_bytes; }
}  // namespace

Task<> alltoall_post_all(Channel& ch, ConstBytes send, MutableBytes recv, std::size_t block) {
  const Ring ring{ch.size()};
  const int p = ch.size();
  const int i = ch.rank();
  auto out = [&](int j) { return send.subspan(static_cast<std::size_t>(j) * block, block); };
  auto in = [&](int j) { return recv.subspan(static_cast<std::size_t>(j) * block, block); };
  ch.copy(in(i), out(i));
  if (p == 1) co_return;
  TransferSet ins;
  for (int k = 1; k < p; ++k) ins.add(ch.recv(ring.mod(i - k), in(ring.mod(i - k))));
  if (pulled(ch.model(), static_cast<double>(block))) {
    TransferSet outs;
    for (int k = 1; k < p; ++k) outs.add(ch.send(ring.mod(i + k), out(ring.mod(i + k))));
    co_await outs;
  } else {
    for (int k = 1; k < p; ++k) {
      Transfer t_out = ch.send(ring.mod(i + k), out(ring.mod(i + k)));
      co_await t_out;
    }
  }
  co_await ins;
}

namespace {
Task<> run(Channel& ch, const CollArgs& a) {
  const auto np = static_cast<std::size_t>(ch.size());
  return alltoall_post_all(ch, bytes_of(a.sendbuf, np * a.bytes()),
                           bytes_of(a.recvbuf, np * a.bytes()), a.bytes());
}
double cost(const CostQuery& q) {
  const double copy = q.m.copy * q.n;  // m_ii
  if (q.p <= 1) return copy;
  const double per_byte = q.m.beta * q.n;
  const double o = q.m.send_overhead();
  if (pulled(q.m, q.n)) return q.m.alpha + (q.p - 2) * o + (q.p - 1) * per_byte + copy;
  return q.m.alpha + per_byte + (q.p - 2) * (o + per_byte) + copy;
}
double message_bytes(const CostQuery& q) { return q.n; }  // every message is one block
}  // namespace

const Algorithm kAlltoallPostAll{
    .name = "post_all",
    .coll = Collective::alltoall,
    .reference =
        "MPICH medium-message all-to-all (002_…: post all irecvs and isends); Sanders "
        "et al. §13.6.1 (direct delivery)",
    .formula =
        "α + βn + (p − 2)(o + βn) + δn; receiver-pulled n: α + (p − 2)o + (p − 1)βn + δn; "
        "o = α: (p − 1)(α + βn) + δn",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "alltoall_test.PostAllMatchesTheOnePortModel",
    .message_bytes = message_bytes,
    .exchange_share = exchange_all,
};

}  // namespace fabcoll::algorithms
