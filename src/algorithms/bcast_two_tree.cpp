// Two-tree broadcast. Sanders, Speck, Träff, "Two-tree algorithms for full bandwidth broadcast,
// reduction and scan" (Parallel Computing 35, 2009); Sanders et al. §13.1.4.
//   The message is cut into k packets; the root sends packet i in step i to the root of the
//   tree whose root edge has colour i mod 2, and every rank forwards each packet down that tree
//   (patterns/two_tree.hpp: every interior node of one tree is a leaf of the other, and the
//   edge 2-colouring lets each rank receive one packet and send one packet per step):
//   T(n, p, k) = (k + 2h)(α + β⌈n/k⌉) at most,  h = ⌊log(p-1)⌋ the trees' height,
//   k* = √(2hβn/α);  T(k*) = βn + 2α log p + O(√(αβn log p))   (the paper's bound).
//   p = 3 (two one-edge trees): 2k(α + βn/k), see below; p = 2: k(α + βn/k), k* = 1.
// Preconditions: none (any p, any root). Packets are cut on element boundaries; k = args.packets.
// On an eager one-port network (the sim: a send takes the receiver's port when it is posted) a
// rank follows the colour schedule by posting its step-s send only when its step s begins (its
// step s-1 receive or send has ended); a send posted early would take a port slot the schedule
// gives to another sender and shift every later step. A rank idle in step s-1 has no such clock:
// at p = 3 rank 1's first forward then takes rank 0's port before the root's second packet and
// the two ranks settle into one packet per two steps (2kτ; measured, the only such p ≤ 64).
//
//   root ──packets of colour 0──→ root of one tree ──→ its interior ranks (leaves of the other)
//        └─packets of colour 1──→ root of the other tree
#include <cmath>

#include "algorithms/algorithms.hpp"
#include "patterns/ring.hpp"
#include "patterns/two_tree.hpp"

namespace fabcoll::algorithms {

namespace {
// Packet i of the message: whole elements only.
MutableBytes two_tree_packet(MutableBytes buf, const EvenBlocks& packets, std::size_t elem_size,
                             std::size_t i) {
  return buf.subspan(packets.begin(i) * elem_size, packets.size(i) * elem_size);
}
// Rank of tree position x (positions are the non-root ranks after the root); -1 stays -1 and
// means the broadcast root for a parent.
int two_tree_rank(int x, int root, int p) { return x < 0 ? root : (root + 1 + x) % p; }
}  // namespace

Task<> bcast_two_tree(Channel& ch, MutableBytes buf, std::size_t elem_size, std::size_t k,
                      int root) {
  const int p = ch.size();
  const int me = ch.rank();
  if (p <= 1) co_return;
  const TwoTree trees{p - 1};
  const std::vector<std::uint8_t> color = trees.edge_colors();
  const std::size_t count = elem_size == 0 ? 0 : buf.size() / elem_size;
  if (k == 0) k = 1;
  const EvenBlocks packets{count, k};
  // The root sends packet i in step i, on its edge of colour i mod 2: to that tree's root.
  std::array<int, 2> tree_of{};  // tree_of[c]: the tree whose root edge has colour c
  for (int t = 0; t < 2; ++t) tree_of[color[static_cast<std::size_t>(2 * trees.root(t) + t)]] = t;

  if (me == root) {
    Transfer sent;  // one send in flight (see the header)
    for (std::size_t i = 0; i < k; ++i) {
      const int t = tree_of[i % 2];
      co_await sent;
      sent = ch.send(two_tree_rank(trees.root(t), root, p),
                     two_tree_packet(buf, packets, elem_size, i), static_cast<std::uint32_t>(i));
    }
    co_await sent;
    co_return;
  }
  const int x = (me - root - 1 + p) % p;
  std::array<int, 2> parent{};
  std::array<int, 2> delay{};  // packet i of tree t arrives here in step i + delay[t]
  std::array<std::array<int, 2>, 2> children{{{-1, -1}, {-1, -1}}};  // per tree, see below
  for (int t = 0; t < 2; ++t) {
    parent[t] = two_tree_rank(trees.parent(t, x), root, p);
    // A rank that got a packet in step a forwards it on an edge of the other colour in step
    // a + 1, on one of the same colour in step a + 2.
    std::vector<int> path;  // x and its ancestors up to the tree root
    for (int y = x; y >= 0; y = trees.parent(t, y)) path.push_back(y);
    for (std::size_t d = path.size() - 1; d > 0; --d) {
      const auto up = color[static_cast<std::size_t>(2 * path[d] + t)];
      const auto down = color[static_cast<std::size_t>(2 * path[d - 1] + t)];
      delay[t] += up != down ? 1 : 2;
    }
    // A rank that got a packet in step a sends it on its out-edge of the other colour in step
    // a + 1 (children[t][0]) and on the one of the same colour in step a + 2 (children[t][1]).
    const std::uint8_t in_color = color[static_cast<std::size_t>(2 * x + t)];
    for (const int c : trees.children(t, x)) {
      if (c < 0) continue;
      const bool same = color[static_cast<std::size_t>(2 * c + t)] == in_color;
      children[t][same ? 1 : 0] = two_tree_rank(c, root, p);
    }
  }
  std::vector<Transfer> recvs;
  recvs.reserve(k);
  for (std::size_t i = 0; i < k; ++i)
    recvs.push_back(ch.recv(parent[tree_of[i % 2]], two_tree_packet(buf, packets, elem_size, i),
                            static_cast<std::uint32_t>(i)));
  // The colour schedule: packet i arrives in step i + delay[tree]; this rank receives at most
  // one packet per step (its two incoming edges differ in colour). A send due in step s is
  // posted once the receive or the send of step s - 1 (if any) has completed, i.e. when this
  // rank's step s begins, so that a one-port model that books ports when sends are posted follows
  // the schedule instead of letting early sends take slots the schedule gives to others. recv_at[s
  // - first]: the packet received in step s, or k if none.
  const std::size_t first = static_cast<std::size_t>(std::min(delay[0], delay[1]));
  const std::size_t last_step = k + static_cast<std::size_t>(std::max(delay[0], delay[1])) + 2;
  std::vector<std::size_t> recv_at(last_step - first + 1, k);
  for (std::size_t i = 0; i < k; ++i)
    recv_at[i + static_cast<std::size_t>(delay[tree_of[i % 2]]) - first] = i;
  // the tree this rank forwards in (it is a leaf of the other one)
  const int mine = children[0][0] >= 0 || children[0][1] >= 0 ? 0 : 1;
  TransferSet sends;
  Transfer sent;  // my latest send, in step sent_step
  std::size_t sent_step = 0;
  {
    for (std::size_t s = first + 1; s <= last_step; ++s) {
      // the packet of my tree due to go out in step s: received in s-1 (other colour first
      // child) or s-2 (second child)
      for (int which = 0; which < 2; ++which) {
        const int child = children[mine][which];
        if (child < 0 || s < first + 1 + static_cast<std::size_t>(which)) continue;
        const std::size_t got = recv_at[s - 1 - static_cast<std::size_t>(which) - first];
        if (got == k || tree_of[got % 2] != mine) continue;
        const std::size_t prev = recv_at[s - 1 - first];
        if (prev != k) {
          Transfer& clock = recvs[prev];
          co_await clock;
        }
        if (sent_step + 1 == s) co_await sent;  // or the end of my own send in step s - 1
        Transfer& arrived = recvs[got];
        co_await arrived;
        sends.add(std::move(sent));
        sent = ch.send(child, two_tree_packet(buf, packets, elem_size, got),
                       static_cast<std::uint32_t>(got));
        sent_step = s;
      }
    }
  }
  sends.add(std::move(sent));
  for (Transfer& r : recvs) sends.add(std::move(r));
  co_await sends;
}

namespace {
Task<> run_bcast_two_tree(Channel& ch, const CollArgs& a) {
  return bcast_two_tree(ch, bytes_of(a.recvbuf, a.bytes()), a.elem_size, a.packets, a.root);
}
double cost(const CostQuery& q) {
  if (q.p <= 1) return 0;
  const double k = q.k >= 1 ? q.k : 1;
  const double tau = q.m.alpha + q.m.beta * std::ceil(q.n / k);
  if (q.p == 3) return 2 * k * tau;
  return (k + 2 * TwoTree{q.p - 1}.height()) * tau;
}
double optimal_k(const CostQuery& q) {
  if (q.p <= 3) return 1;
  const int h = TwoTree{q.p - 1}.height();
  const double k = std::sqrt(2 * h * q.m.beta * q.n / q.m.alpha);
  return k >= 1 ? k : 1;
}
}  // namespace

namespace {
// Of the k + 2h packet steps, all but the root's first move packets the tree nodes received
// (sim: exact at p = 4 and 8, within 0.05 at p = 5). p = 3: both trees are leaves of the root
// except for the relay of the other half, half the bytes.
double written_share(const CostQuery& q) {
  if (q.p < 3) return 0;
  if (q.p == 3) return 0.5;
  const double h = std::floor(std::log2(q.p - 1.0));
  return 1 - 1 / (std::max(q.k, 1.0) + 2 * h);
}
}  // namespace

namespace {
// p ≥ 4, k > 1: every node is inner in one tree and sends there while it receives in the other:
// 1 − 1.8/k (approximate: the sim's share is 0–0.91 at p = 4 … 16, k = 2 … 32). p ≤ 3: 0.
double exchange_share(const CostQuery& q) {
  if (q.p < 4 || q.k <= 1) return 0;
  return std::max(0.0, 1 - 1.8 / q.k);
}
}  // namespace

const Algorithm kBcastTwoTree{
    .name = "two_tree",
    .coll = Collective::bcast,
    .reference = "Sanders, Speck, Träff 2009; Sanders et al. §13.1.4",
    .formula = "(k + 2h)(α + β⌈n/k⌉), h = ⌊log(p-1)⌋, k* = √(2hβn/α); p = 3: 2k(α + βn/k)",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = optimal_k,
    .run = run_bcast_two_tree,
    .test = "bcast_reduce_test.BcastTwoTreeWithinBound",
    .written_share = written_share,
    .exchange_share = exchange_share,
    .paced = true,
};

}  // namespace fabcoll::algorithms
