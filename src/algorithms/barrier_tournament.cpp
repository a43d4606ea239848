// Tournament barrier (Hensgen, Finkel and Manber). Vadhiyar, "Collective Communication
// Implementations" (002_…), Barrier Algorithms:
//   "At each round k, proc. j receives a message from proc. i, where i = j - 2^k"; the receiver
//   wins and plays the next round; "the single winner then broadcasts a message to all the
//   other nodes". The broadcast goes back down the tournament: every winner wakes the players
//   it beat, latest round first, so it is a binomial broadcast (Thm 13.1) and takes ⌈log p⌉α.
//   T(p) ≤ 2⌈log p⌉ α, with equality for p = 2^d
// Preconditions: none. With v = p - 1 - j (distance from the top rank) j plays round k while
// v is a multiple of 2^k; it wins if v is a multiple of 2^(k+1) (a bye when j - 2^k < 0). The
// champion is rank p - 1.
//
//   p = 8, round 0: 0→1 2→3 4→5 6→7   round 1: 1→3 5→7   round 2: 3→7
//   wake-up:        7→3,  7→5 3→1,  7→6 5→4 3→2 1→0
//   (a player leaves only after the champion has heard, through the rounds, from everyone)
#include "algorithms/algorithms.hpp"
#include "patterns/binomial_tree.hpp"

namespace fabcoll::algorithms {

Task<> barrier_tournament(Channel& ch) {
  const int p = ch.size();
  const int j = ch.rank();
  const int v = p - 1 - j;
  const int rounds = BinomialTree::ceil_log2(p);
  int played = rounds;  // rounds this player won (or got a bye in) before losing
  for (int k = 0; k < rounds; ++k) {
    const int dist = 1 << k;
    if (v % (2 * dist) != 0) {  // loser of round k: report to the winner, wait to be woken
      Transfer game = ch.send(j + dist, ConstBytes{}, 0);
      Transfer wake = ch.recv(j + dist, MutableBytes{}, 1);
      co_await game;
      co_await wake;
      played = k;
      break;
    }
    if (j - dist >= 0) {  // winner of round k: the loser's report
      Transfer game = ch.recv(j - dist, MutableBytes{}, 0);
      co_await game;
    }
  }
  TransferSet wakes;  // wake the players beaten in rounds played-1 … 0
  for (int k = played - 1; k >= 0; --k)
    if (j - (1 << k) >= 0) wakes.add(ch.send(j - (1 << k), ConstBytes{}, 1));
  co_await wakes;
}

namespace {
Task<> run(Channel& ch, const CollArgs& /*args*/) { return barrier_tournament(ch); }
double cost(const CostQuery& q) { return 2 * BinomialTree::ceil_log2(q.p) * q.m.alpha; }
}  // namespace

const Algorithm kBarrierTournament{
    .name = "tournament",
    .coll = Collective::barrier,
    .reference =
        "Vadhiyar, Collective Communication Implementations (tournament barrier, "
        "Hensgen, Finkel and Manber)",
    .formula = "2⌈log p⌉α",
    .needs_commutative = false,
    .needs_power_of_two = false,
    .cost = cost,
    .optimal_k = nullptr,
    .run = run,
    .test = "gather_barrier_test.BarrierTournamentMatchesFormula",
};

}  // namespace fabcoll::algorithms
