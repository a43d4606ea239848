#include "collectives/sim_cost.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "algorithms/sim_steps.hpp"
#include "collectives/collectives.hpp"

namespace fabcoll {

sim::Stats run_for_cost(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                        bool phantom, int root, std::size_t packets, std::vector<int> cpus,
                        long strategy) {
  sim::World world(p, m, phantom);
  world.set_cpus(std::move(cpus));
  const auto np = static_cast<std::size_t>(p);
  const std::size_t count = bytes / 8;
  const bool big = alg.coll == Collective::alltoall ||
                   alg.coll == Collective::reduce_scatter_block ||
                   alg.coll == Collective::scatter || alg.coll == Collective::gather ||
                   alg.coll == Collective::allgather || alg.coll == Collective::alltoallv;
  // alltoallv: uniform blocks of `count` elements, the alltoall layout.
  std::vector<std::size_t> v_counts(np, count), v_displs(np);
  for (std::size_t i = 0; i < np; ++i) v_displs[i] = i * count;
  // allgatherv: uniform blocks of `count` elements, the allgather layout.
  const bool gatherv = alg.coll == Collective::allgatherv;
  std::vector<std::size_t> gv_counts(gatherv ? np : 0, count), gv_displs(gatherv ? np : 0);
  for (std::size_t i = 0; i < gv_displs.size(); ++i) gv_displs[i] = i * count;
  // In phantom mode nothing is written, so one input and one output buffer serve all ranks.
  const std::size_t per_rank = (big || gatherv ? np : 1) * count + 1;
  const std::size_t nbuf = phantom ? 1 : np;
  // new double[] leaves the memory untouched: phantom runs of huge n commit no pages.
  std::vector<std::unique_ptr<double[]>> ins(nbuf), outs(nbuf);
  for (std::size_t i = 0; i < nbuf; ++i) {
    ins[i].reset(new double[per_rank]);
    outs[i].reset(new double[per_rank]);
  }
  std::vector<CollArgs> args(np);
  return world.run([&](Comm& comm) {
    const auto ur = static_cast<std::size_t>(comm.rank());
    CollArgs& a = args[ur];
    a.coll = alg.coll;
    a.count = count;
    a.elem_size = 8;
    a.op = ReduceOp(FC_SUM, FC_DOUBLE);
    a.root = root;
    a.packets = packets;
    a.strategy = strategy;
    double* out = outs[phantom ? 0 : ur].get();
    a.recvbuf = out;
    a.sendbuf = ins[phantom ? 0 : ur].get();
    if (alg.coll == Collective::allgather) a.sendbuf = out + ur * count;
    if (gatherv) {
      a.counts = gv_counts.data();
      a.displs = gv_displs.data();
      a.sendbuf = out + ur * count;
    }
    if (alg.coll == Collective::alltoallv) {
      a.scounts = v_counts.data();
      a.sdispls = v_displs.data();
      a.counts = v_counts.data();
      a.displs = v_displs.data();
    }
    if (alg.coll == Collective::allreduce || alg.coll == Collective::scan ||
        alg.coll == Collective::exscan || alg.coll == Collective::bcast)
      a.sendbuf = a.recvbuf;
    return run_collective(comm, a, &alg);
  });
}

std::vector<int> last_receivers(const Algorithm& alg, int p, std::size_t bytes, const CostModel& m,
                                std::size_t packets) {
  std::vector<int> last(static_cast<std::size_t>(std::max(p, 0)));
  for (int r = 0; r < p; ++r) {
    if (p == 1) break;
    const sim::Stats st = run_for_cost(alg, p, bytes, m, true, r, packets);
    // A rank's finish includes its own sends: of ranks finishing together, one that forwarded
    // had the data before the one it sent to, so the one that sent fewest messages.
    const auto later = [&](int a, int b) {
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      if (st.rank_finish[ua] != st.rank_finish[ub]) return st.rank_finish[ua] > st.rank_finish[ub];
      return st.messages_sent[ua] < st.messages_sent[ub];
    };
    int at = (r + 1) % p;
    for (int i = 2; i < p; ++i) {
      const int q = (r + i) % p;
      if (later(q, at)) at = q;
    }
    last[static_cast<std::size_t>(r)] = at;
  }
  return last;
}

namespace {
// One run at k packets of one element each (β = 0: the size does not matter). Cached; the lock
// is not held while the sim runs (it may cost other algorithms, which may ask for steps too).
double steps_at(const Algorithm& alg, int p, std::size_t k) {
  using Key = std::tuple<const Algorithm*, int, std::size_t>;
  static std::mutex mu;
  static std::map<Key, double> cache;
  const Key key{&alg, p, k};
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  CostModel unit;
  unit.alpha = 1;
  unit.beta = 0;
  unit.gamma = 0;
  const double t = run_for_cost(alg, p, 8 * k, unit, true, 0, k).finish_time;
  const std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, t);
  return t;
}
}  // namespace

double sim_steps(const Algorithm& alg, int p, double k_in) {
  const double k = std::max(1.0, std::round(k_in));
  if (k <= static_cast<double>(kSimStepsExactK))
    return steps_at(alg, p, static_cast<std::size_t>(k));
  // Linear between runs at the powers of two around k (the last segment beyond the top), one
  // more for odd k: with an odd count the two trees carry unequal shares, and the steps of
  // odd and even k can lie on two lines (the two-tree all-reduce at p = 29: k + 8 at even k,
  // about 1.5k at odd).
  std::size_t lo = kSimStepsExactK;
  while (2 * lo < kSimStepsTopK && static_cast<double>(2 * lo) <= k) lo *= 2;
  const std::size_t odd = std::fmod(k, 2.0) == 1 ? 1 : 0;
  const double a = steps_at(alg, p, lo + odd);
  const double b = steps_at(alg, p, 2 * lo + odd);
  return a + (k - static_cast<double>(lo + odd)) * (b - a) / static_cast<double>(lo);
}

}  // namespace fabcoll
